package httpapi

import (
	"os"
	"regexp"
	"testing"
)

// The answer-link page escapes exactly the characters the console's
// inbox escapes: the class of ui/app.js's visible, read from the file,
// against every character of the Basic Multilingual Plane.
func TestTheAnswerLinkPageEscapesWhatTheConsoleEscapes(t *testing.T) {
	js, err := os.ReadFile("ui/app.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`const visible = \(s\) => s\.replace\(/(\[[^\]]*\])/g`).FindSubmatch(js)
	if m == nil {
		t.Fatal("ui/app.js has no visible(s) = s.replace(/[…]/g, …) to compare with")
	}
	class := regexp.MustCompile(`\\u([0-9a-fA-F]{4})`).ReplaceAllString(string(m[1]), `\x{$1}`)
	console := regexp.MustCompile(`^` + class + `$`)
	for r := rune(0); r <= 0xffff; r++ {
		if 0xd800 <= r && r <= 0xdfff {
			continue
		}
		if got, want := hidden(r), console.MatchString(string(r)); got != want {
			t.Errorf("U+%04X: the page escapes it %t, the console %t", r, got, want)
		}
	}
}
