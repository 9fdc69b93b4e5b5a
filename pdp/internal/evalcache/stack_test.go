package evalcache

import "testing"

// GrowStack must grow the stack, not allocate: a frame over the
// compiler's limit would be moved to the heap, allocated and zeroed on
// every evaluation, and grow nothing.
func TestGrowStackStaysOnTheStack(t *testing.T) {
	if allocs := testing.AllocsPerRun(100, GrowStack); allocs != 0 {
		t.Fatalf("GrowStack allocates %.0f times per call", allocs)
	}
}
