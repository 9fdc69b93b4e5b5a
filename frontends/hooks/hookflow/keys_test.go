package hookflow_test

import (
	"strings"
	"testing"

	"github.com/toolperm/pdp/frontends/hooks/hookflow"
)

type event struct {
	HookEventName string         `json:"hook_event_name"`
	ToolName      string         `json:"tool_name"`
	ToolInput     map[string]any `json:"tool_input"`
}

// CheckKeys refuses keys that fold together where the decision reads
// them, and names the event as the agent reads it (the exact key), so
// that the refusal is answered in that event's shape. What the decision
// does not read — a tool's response after the call, which may well hold
// "ETag" beside "etag" — is compared at the top level only, so such an
// event is still taken.
func TestCheckKeys(t *testing.T) {
	for name, tc := range map[string]struct {
		event, agentEvent, says string
	}{
		"plain":                          {`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, "PreToolUse", ""},
		"a response with folding keys":   {`{"hook_event_name":"PostToolUse","tool_name":"WebFetch","tool_input":{},"tool_response":{"ETag":"1","etag":"2"}}`, "PostToolUse", ""},
		"not an object":                  {`[1]`, "", ""},
		"not JSON":                       {`{"hook_event_name":`, "", ""},
		"the event name in another case": {`{"hook_event_name":"PreToolUse","Hook_Event_Name":"PostToolUse","tool_name":"Bash"}`, "PreToolUse", `"hook_event_name" and "Hook_Event_Name" differ only in case`},
		"the event name before it":       {`{"Hook_Event_Name":"PostToolUse","hook_event_name":"PreToolUse","tool_name":"Bash"}`, "PreToolUse", "differ only in case"},
		"a member only in another case":  {`{"hook_event_name":"PreToolUse","tool_name":"Bash","Tool_Input":{"command":"ls"}}`, "PreToolUse", `field "Tool_Input" is "tool_input" in another case`},
		"unread members folding":         {`{"hook_event_name":"PreToolUse","tool_name":"Bash","extra":1,"EXTRA":2}`, "PreToolUse", "differ only in case"},
		"a key twice":                    {`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_name":"TodoWrite"}`, "PreToolUse", `"tool_name" appears twice`},
		"deep inside tool_input":         {`{"hook_event_name":"PreToolUse","tool_name":"x","tool_input":{"a":[{"b":{"k":1,"\u212a":2}}]}}`, "PreToolUse", "differ only in case"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := hookflow.CheckKeys([]byte(tc.event), event{})
			if got != tc.agentEvent {
				t.Errorf("the agent's event is %q, want %q", got, tc.agentEvent)
			}
			switch {
			case tc.says == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "ambiguous")):
				t.Fatalf("error %v, want one that says %q", err, tc.says)
			}
		})
	}
}
