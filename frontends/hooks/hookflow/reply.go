package hookflow

import (
	"encoding/json"
	"fmt"
	"io"
)

// Reply is a hook's answer in the agent's own shape.
type Reply struct {
	// Stdout, Stderr and Exit are what a command hook prints and how it
	// exits.
	Stdout []byte
	Stderr string
	Exit   int
	// Body is the answer of the agent's HTTP hook endpoint (status 200):
	// the same decision in the form the agent reads from a hook's output.
	Body []byte
}

// JSON encodes v with a newline, for an agent's hook output. v is one of
// the adapters' own output types, which always encode.
func JSON(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("hookflow: encoding a hook answer: %v", err))
	}
	return append(raw, '\n')
}

// PermissionReply answers a PermissionRequest event in the shape Claude
// Code and Codex share: hookSpecificOutput.decision.behavior allow or
// deny, with the message a denial shows.
func PermissionReply(event, behavior, message string) Reply {
	type decision struct {
		Behavior string `json:"behavior"`
		Message  string `json:"message,omitempty"`
	}
	type output struct {
		HookEventName string   `json:"hookEventName"`
		Decision      decision `json:"decision"`
	}
	out := JSON(struct {
		HookSpecificOutput output `json:"hookSpecificOutput"`
	}{output{event, decision{behavior, message}}})
	return Reply{Stdout: out, Body: out}
}

// ReadEvent reads one hook event of at most 64 MiB.
func ReadEvent(r io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the hook event: %w", err)
	}
	return raw, nil
}
