package api

import (
	"strings"
	"testing"
)

func TestDuplicateKeys(t *testing.T) {
	cases := map[string]struct {
		body string
		bad  bool
	}{
		"distinct keys at every depth":     {`{"a":1,"b":{"c":[1,{"d":2}]}}`, false},
		"equal byte-wise":                  {`{"path":"/etc/passwd","path":"ok.txt"}`, true},
		"equal byte-wise once escaped":     {`{"path":"a","p\u0061th":"b"}`, true},
		"ASCII case":                       {`{"args":{"path":"a","PATH":"b"}}`, true},
		"long s (U+017F)":                  {`{"session_id":"a","ſession_id":"b"}`, true},
		"long s escaped":                   {`{"session_id":"a","\u017fession_id":"b"}`, true},
		"long s against a capital S":       {`{"Session_id":"a","ſession_id":"b"}`, true},
		"Kelvin sign (U+212A)":             {`{"\u212aey":1,"key":2}`, true},
		"Kelvin sign against a capital K":  {`{"Key":1,"Key":2,"\u212aey":3}`, true},
		"Kelvin sign alone":                {`{"\u212aey":1,"kez":2}`, false},
		"nested object":                    {`{"args":{"o":{"dest":"/etc/x","ſ":1,"S":2}}}`, true},
		"nested object, long s in a value": {`{"args":{"o":{"s":"ſ","t":"S"}}}`, false},
		"array of objects":                 {`{"a":[{"x":1},{"\u212a":1,"k":2}]}`, true},
		"array of objects, one key each":   {`{"a":[{"x":1},{"x":2}]}`, false},
		"the same key in sibling objects":  {`{"a":{"x":1},"b":{"x":2}}`, false},
		"deep in an array":                 {`{"a":[{"x":1,"y":{"z":1,"z":2}}]}`, true},
		"every kind of value":              {`{"a":"x","b":[],"c":{},"d":null,"e":true,"a2":1}`, false},
		"a top-level array":                {`[{"a":1,"a":2}]`, true},
		"dotless i is not i":               {`{"ı":1,"i":2}`, false},
		"after a nested object":            {`{"args":{"path":"a"},"session_id":"a","session_id":"b"}`, true},
		"after an empty object":            {`{"args":{},"session_id":"a","ſession_id":"b"}`, true},
		"after an array":                   {`{"a":[1,[2]],"k":1,"\u212a":2}`, true},
		"in an object after a sibling":     {`{"a":{"b":{}},"s":{"workspace":"/w","work\u017fpace":"/"}}`, true},
		"values that look like keys":       {`{"a":{"x":1},"b":"a","c":"b"}`, false},
		"an object's key after its value":  {`{"a":{"x":{"y":1}},"x":2,"y":3}`, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := DuplicateKeys([]byte(tc.body)); (err != nil) != tc.bad {
				t.Fatalf("%s: error %v, want error %v", tc.body, err, tc.bad)
			}
		})
	}
}

// TestFoldKeyIsEqualFold: two keys fold together exactly when
// strings.EqualFold, the rule encoding/json matches field names by, says
// they are equal.
func TestFoldKeyIsEqualFold(t *testing.T) {
	words := []string{
		"session_id", "SESSION_ID", "ſession_id", "Session_Id", "session_ıd", "sessİon_id",
		"key", "KEY", "\u212aey", "kez", "µ", "μ", "Μ", "ß", "ẞ", "ss", "Σ", "σ", "ς",
		"ǅ", "ǆ", "Ǆ", "ﬀ", "ff", "a\xffb", "a\ufffdb", "",
	}
	for _, a := range words {
		for _, b := range words {
			if got, want := FoldKey(a) == FoldKey(b), strings.EqualFold(a, b); got != want {
				t.Errorf("FoldKey(%q) == FoldKey(%q) is %v, strings.EqualFold says %v", a, b, got, want)
			}
		}
	}
	for _, k := range []string{"method", "params", "requestid", "session_id"} {
		if got := FoldKey(k); got != k {
			t.Errorf("FoldKey(%q) = %q, want it unchanged", k, got)
		}
	}
}
