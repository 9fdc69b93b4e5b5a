package api

import (
	"encoding/json"
	"testing"
)

// TestAnswerAllows: only a person's allow lets a call run; a runtime's
// report, even one an older server sent as an answer, never does.
func TestAnswerAllows(t *testing.T) {
	cases := map[string]struct {
		answer string // JSON, or "null"
		allows bool
	}{
		"allow once":                       {`{"answer":"allow_once","channel":"console"}`, true},
		"allow for the session":            {`{"answer":"allow_session","channel":"console"}`, true},
		"allow for the project":            {`{"answer":"allow_project","channel":"console"}`, true},
		"deny":                             {`{"answer":"deny","channel":"console"}`, false},
		"an unknown answer":                {`{"answer":"sure","channel":"console"}`, false},
		"no answer":                        {`null`, false},
		"an outcome read as answer":        {`{"answer":"allow_once","channel":"claude-code","by":"runtime"}`, false},
		"an outcome on a person's channel": {`{"answer":"allow_once","channel":"console","by":"runtime"}`, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var ev Event
			if err := json.Unmarshal([]byte(`{"decision_id":"d","decision":"ask","answer":`+tc.answer+`}`), &ev); err != nil {
				t.Fatal(err)
			}
			if got := ev.Answer.Allows(); got != tc.allows {
				t.Fatalf("Allows() = %v, want %v", got, tc.allows)
			}
		})
	}
}
