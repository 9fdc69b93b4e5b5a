package main

import (
	"context"
	"encoding/json"
	"testing"
)

// TestStreamsNeverRepeatADocument checks the promise of the shell and
// mixed streams: no input document the policy judges repeats, so no memo
// can answer any request of a run.
func TestStreamsNeverRepeatADocument(t *testing.T) {
	ctx := context.Background()
	engine, err := inputEngine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const clients = 8
	for name, perClient := range map[string]int{"shell": 100, "mixed": 100, "large": 5} {
		t.Run(name, func(t *testing.T) {
			s := streams[name]
			seen := map[string]int{}
			for c := 0; c < clients; c++ {
				for k := 0; k < perClient; k++ {
					i := walk(s, c, k, clients)
					doc, err := inputOf(ctx, engine, s.body(i, clients))
					if err != nil {
						t.Fatalf("body %d: %v", i, err)
					}
					key, _ := json.Marshal(doc) // map keys are sorted
					if j, dup := seen[string(key)]; dup {
						t.Fatalf("bodies %d and %d give the same input document %s", j, i, key)
					}
					seen[string(key)] = i
				}
			}
		})
	}
}

// TestRepeatedStreamClientsStartApart checks that no two clients send the
// same body of the repeated mix at the same step.
func TestRepeatedStreamClientsStartApart(t *testing.T) {
	s := streams["repeated"]
	for k := 0; k < 3; k++ {
		seen := map[int]bool{}
		for c := 0; c < len(mix); c++ {
			i := walk(s, c, k, 32) % len(mix)
			if seen[i] {
				t.Fatalf("step %d: two clients send body %d", k, i)
			}
			seen[i] = true
		}
	}
}
