package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// DuplicateKeys reports the first object in a JSON text that holds a key
// twice, or two keys equal but for case. encoding/json keeps one of them
// silently (the last; a case variant even fills the same field), while a
// tool reading the same text may take the other — so the PDP would judge
// one value and the tool use another. Such a body is refused, never
// decided. The text must already be valid JSON.
func DuplicateKeys(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]string
		key    bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			k, ok := tok.(string)
			if !ok { // the closing brace
				stack = stack[:len(stack)-1]
				continue
			}
			lower := strings.ToLower(k)
			if other, dup := top.keys[lower]; dup {
				if other == k {
					return fmt.Errorf("the key %q appears twice in one object", k)
				}
				return fmt.Errorf("the keys %q and %q differ only in case", other, k)
			}
			top.keys[lower] = k
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]string{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: in an object, a key comes next.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}
