package cursor_test

import (
	"testing"

	"github.com/toolperm/pdp/frontends/hooks/cursor"
	"github.com/toolperm/pdp/frontends/hooks/hookflow/hookflowtest"
)

var adapter = hookflowtest.Adapter{Parse: cursor.Parse, Reply: cursor.Reply}

// The events in testdata are Cursor's agent hook payloads as
// https://cursor.com/docs/agent/hooks describes them: the common fields
// (conversation_id, generation_id, model, cursor_version,
// workspace_roots, user_email, transcript_path), preToolUse's tool_name,
// tool_input and tool_use_id, beforeShellExecution's command and cwd,
// beforeReadFile's file_path and content, beforeMCPExecution's tool_name
// and tool_input (a JSON string) with the server's url.
func TestGolden(t *testing.T) { hookflowtest.Run(t, "testdata", adapter) }

func TestMalformedEvents(t *testing.T) {
	hookflowtest.Refuses(t, adapter, map[string]struct{ Event, Says string }{
		"not JSON":          {`nope`, "not JSON"},
		"another event":     {`{"conversation_id":"c","hook_event_name":"stop"}`, `"stop" is not one`},
		"no conversation":   {`{"hook_event_name":"beforeShellExecution","command":"ls"}`, "no conversation_id"},
		"no tool":           {`{"conversation_id":"c","hook_event_name":"preToolUse"}`, "names no tool"},
		"MCP input garbage": {`{"conversation_id":"c","hook_event_name":"beforeMCPExecution","tool_name":"x","tool_input":"{oops"}`, "not an object"},
	})
}

func TestReadFileCannotAsk(t *testing.T) {
	for event, want := range map[string]bool{cursor.BeforeReadFile: false, cursor.PreToolUse: true, cursor.BeforeShellExecution: true} {
		c, err := cursor.Parse([]byte(`{"conversation_id":"c","hook_event_name":"` + event + `","tool_name":"Read","command":"ls","file_path":"/w/a"}`))
		if err != nil || cursor.CanAsk(c) != want {
			t.Fatalf("%s: CanAsk %v, %v", event, cursor.CanAsk(c), err)
		}
	}
}
