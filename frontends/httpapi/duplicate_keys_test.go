package httpapi_test

import (
	"net/http"
	"testing"
)

// TestKeysEqualUnderFoldingAreRefused: encoding/json fills a field from
// any key equal to its name under Unicode case folding, so
// "ſession_id" (U+017F) is session_id. A body holding both is refused
// as ambiguous before anything is read or written: no session is
// created, no decision recorded, no answer stored.
func TestKeysEqualUnderFoldingAreRefused(t *testing.T) {
	s := newService(t)
	ask := s.decide(shell("held", "make"))
	id := ask["decision_id"].(string)
	cases := []struct {
		name, method, path, body string
	}{
		{"session id and a long s", "POST", "/v1/decide", `{"session_id":"a","ſession_id":"b","tool":"read_file","args":{"path":"x"},"cwd":"/w"}`},
		{"the long s escaped", "POST", "/v1/decide", `{"session_id":"a","\u017fession_id":"b","tool":"read_file","args":{"path":"x"},"cwd":"/w"}`},
		{"a Kelvin sign in the args", "POST", "/v1/decide", `{"session_id":"a","tool":"read_file","args":{"path":"x","o":[{"key":"/w/a","\u212aey":"/etc/shadow"}]},"cwd":"/w"}`},
		{"keys equal byte-wise", "POST", "/v1/decide", `{"session_id":"a","session_id":"b","tool":"read_file","cwd":"/w"}`},
		{"a key twice after the args", "POST", "/v1/decide", `{"session_id":"a","tool":"read_file","args":{"path":"x"},"cwd":"/w","cwd":"/"}`},
		{"a session's workspace", "POST", "/v1/sessions", `{"id":"a","workspace":"/w","work\u017fpace":"/"}`},
		{"an answer", "POST", "/v1/decisions/" + id + "/answer", `{"answer":"deny","an\u017fwer":"allow_session","channel":"cli"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out := s.call(tc.method, tc.path, tc.body)
			e, _ := out["error"].(map[string]any)
			if code != http.StatusBadRequest || e["code"] != "ambiguous_argument" {
				t.Fatalf("status %d %v, want 400 ambiguous_argument", code, out)
			}
		})
	}
	for _, sid := range []string{"a", "b"} {
		s.mustStatus(http.StatusNotFound, "GET", "/v1/sessions/"+sid, nil)
	}
	if list := s.mustStatus(200, "GET", "/v1/decisions", nil)["decisions"].([]any); len(list) != 1 {
		t.Fatalf("refused bodies were recorded: %v", list)
	}
	if got := s.mustStatus(200, "GET", "/v1/decisions/"+id, nil); got["answer"] != nil {
		t.Fatalf("a refused answer was stored: %v", got["answer"])
	}
}
