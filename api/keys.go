package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
)

// DuplicateKeys reports the first object in a JSON text that holds a key
// twice, or two keys equal under Unicode simple case folding ("PATH" and
// "path", "ſession_id" and "session_id"). encoding/json keeps one of them
// silently (the last; a folded variant even fills the same field, since
// it matches field names as strings.EqualFold does), while a tool reading
// the same text may take the other — so the PDP would judge one value and
// the tool use another. Such a body is refused, never decided. The text
// must already be valid JSON.
func DuplicateKeys(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		keys      map[string]string // folded key → the key as written; nil in an array
		expectKey bool              // in an object: the next string is a key
	}
	var stack []*frame
	valueDone := func() { // in an object, a key comes next
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			stack[n-1].expectKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &frame{keys: map[string]string{}, expectKey: true})
			case '[':
				stack = append(stack, &frame{})
			default: // a closing brace or bracket ends a value of its parent
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].expectKey {
				top := stack[n-1]
				folded := FoldKey(t)
				if other, dup := top.keys[folded]; dup {
					if other == t {
						return fmt.Errorf("the key %q appears twice in one object", t)
					}
					return fmt.Errorf("the keys %q and %q differ only in case", other, t)
				}
				top.keys[folded], top.expectKey = t, false
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
}

// FoldKey maps every string equal to s under Unicode simple case folding
// (strings.EqualFold, and so encoding/json's matching of field names) to
// one key: each rune becomes the smallest rune of its folding orbit, an
// ASCII letter its lower case. So FoldKey(a) == FoldKey(b) exactly when
// strings.EqualFold(a, b), and a key of lower-case ASCII maps to itself.
func FoldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		if 'A' <= least && least <= 'Z' {
			least += 'a' - 'A' // the orbit of an ASCII capital holds its lower case
		}
		b.WriteRune(least)
	}
	return b.String()
}
