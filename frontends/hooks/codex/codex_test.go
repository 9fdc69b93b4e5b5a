package codex_test

import (
	"testing"

	"github.com/toolperm/pdp/frontends/hooks/codex"
	"github.com/toolperm/pdp/frontends/hooks/hookflow/hookflowtest"
)

var adapter = hookflowtest.Adapter{Parse: codex.Parse, Reply: codex.Reply}

// The events in testdata are Codex's hook payloads as codex-rs writes
// them: codex-rs/hooks/schema/generated/{pre-tool-use,permission-request,
// post-tool-use}.command.input.schema.json and command_input_json in
// codex-rs/hooks/src/events/pre_tool_use.rs (tool_name "Bash" with
// {"command"} for the shell tools, "apply_patch" with {"command": patch},
// mcp__<server>__<tool> with the MCP arguments; agent_id/agent_type for a
// sub-agent). The replies follow codex-rs/hooks/src/engine/output_parser.rs.
func TestGolden(t *testing.T) { hookflowtest.Run(t, "testdata", adapter) }

func TestMalformedEvents(t *testing.T) {
	hookflowtest.Refuses(t, adapter, map[string]struct{ Event, Says string }{
		"not JSON":      {`{`, "not JSON"},
		"another event": {`{"session_id":"s","hook_event_name":"Stop","tool_name":"Bash"}`, `"Stop" is not one`},
		"no tool":       {`{"session_id":"s","hook_event_name":"PreToolUse"}`, "names no tool"},
		"no session":    {`{"hook_event_name":"PreToolUse","tool_name":"Bash"}`, "no session_id"},
		"input a list":  {`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":[]}`, "not JSON"},
	})
}
