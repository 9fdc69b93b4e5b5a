package api

import "testing"

func TestDuplicateKeys(t *testing.T) {
	for body, bad := range map[string]bool{
		`{"a":1,"b":{"c":[1,{"d":2}]}}`:                    false,
		`{"path":"/etc/passwd","path":"ok.txt"}`:           true,
		`{"args":{"path":"a","PATH":"b"}}`:                 true,
		`{"a":[{"x":1},{"x":2}]}`:                          false,
		`{"a":{"x":1},"b":{"x":2}}`:                        false,
		`{"a":[{"x":1,"y":{"z":1,"z":2}}]}`:                true,
		`{"\u212aey":1,"key":2}`:                           true,
		`{"a":"x","b":[],"c":{},"d":null,"e":true,"a2":1}`: false,
		`[{"a":1,"a":2}]`:                                  true,
	} {
		if err := DuplicateKeys([]byte(body)); (err != nil) != bad {
			t.Errorf("%s: error %v, want error %v", body, err, bad)
		}
	}
}
