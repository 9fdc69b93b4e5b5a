package claudecode_test

import (
	"testing"

	"github.com/toolperm/pdp/frontends/hooks/claudecode"
	"github.com/toolperm/pdp/frontends/hooks/hookflow/hookflowtest"
)

// The events in testdata are Claude Code's hook payloads as its hooks
// reference documents them (https://code.claude.com/docs/en/hooks:
// PreToolUse and PermissionRequest input, the tool_input of each tool,
// agent_id/agent_type of a sub-agent's call); the replies are its
// hookSpecificOutput forms of the same page.
func TestGolden(t *testing.T) {
	hookflowtest.Run(t, "testdata", hookflowtest.Adapter{Parse: claudecode.Parse, Reply: claudecode.Reply})
}

func TestMalformedEvents(t *testing.T) {
	hookflowtest.Refuses(t, hookflowtest.Adapter{Parse: claudecode.Parse, Reply: claudecode.Reply}, map[string]struct{ Event, Says string }{
		"not JSON":      {`{`, "not JSON"},
		"another event": {`{"session_id":"s","hook_event_name":"UserPromptSubmit","tool_name":"Bash"}`, "not one this hook takes"},
		"no session":    {`{"hook_event_name":"PermissionRequest","tool_name":"Bash"}`, "not one this hook takes"},
		// A PermissionRequest whose fields do not decode is refused as a
		// PreToolUse is: a tool_input left out would judge a Write of no
		// file, a sub-agent's id left out the main session.
		"permission request, tool_input not an object": {`{"session_id":"s","hook_event_name":"PermissionRequest","tool_name":"Write","tool_input":["/etc/passwd"]}`, "not JSON"},
		"permission request, agent_id not a string":    {`{"session_id":"s","hook_event_name":"PermissionRequest","tool_name":"Read","tool_input":{},"agent_id":7}`, "not JSON"},
	})
}
