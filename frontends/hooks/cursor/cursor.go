// Package cursor maps Cursor's agent hook events (hooks.json "version": 1:
// preToolUse, beforeShellExecution, beforeMCPExecution, beforeReadFile;
// https://cursor.com/docs/agent/hooks) to the PDP's calls and its
// decisions back to Cursor's answer, {"permission": "allow"|"deny"|"ask",
// "user_message": …, "agent_message": …}.
//
// Cursor runs the action when a hook fails (a non-zero exit, output it
// cannot read) unless the hook is configured with "failClosed": true, so
// every answer here is exit 0 with a permission, and `pdp init --agent
// cursor` sets failClosed.
package cursor

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/frontends/hooks/hookflow"
)

// Agent is the name the PDP knows Cursor by.
const Agent = "cursor"

// The hook events this adapter takes.
const (
	PreToolUse           = "preToolUse"
	BeforeShellExecution = "beforeShellExecution"
	BeforeMCPExecution   = "beforeMCPExecution"
	BeforeReadFile       = "beforeReadFile"
)

// Event is a hook event as Cursor writes it on the hook's stdin: the
// fields common to every event and those of the four before-events.
type Event struct {
	ConversationID string   `json:"conversation_id"`
	GenerationID   string   `json:"generation_id"`
	HookEventName  string   `json:"hook_event_name"`
	WorkspaceRoots []string `json:"workspace_roots"`
	Cwd            string   `json:"cwd"`
	// preToolUse; beforeMCPExecution sends tool_input as a JSON string.
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
	// beforeShellExecution
	Command string `json:"command"`
	// beforeReadFile (its content stays out of the request)
	FilePath string `json:"file_path"`
}

// Parse maps one Cursor hook event to the call the PDP judges, in
// session "cursor:<conversation_id>" with the first workspace root as
// its workspace. An event without workspace_roots is denied (the flow,
// Call.NoWorkspace): its cwd is never taken for the workspace. beforeShellExecution is Cursor's Shell tool,
// beforeReadFile its Read; an MCP tool is mcp__cursor__<tool>, since
// Cursor names the server only by its URL or command.
func Parse(raw []byte) (hookflow.Call, error) {
	if name, err := hookflow.CheckKeys(raw, Event{}); err != nil {
		return hookflow.Call{Agent: Agent, Event: name}, err
	}
	var ev Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return hookflow.Call{}, fmt.Errorf("the Cursor hook event is not JSON: %w", err)
	}
	c := hookflow.Call{Agent: Agent, Event: ev.HookEventName, Kind: hookflow.Pre, Cwd: ev.Cwd, ToolUseID: ev.ToolUseID}
	if len(ev.WorkspaceRoots) > 0 {
		c.Workspace = ev.WorkspaceRoots[0]
	}
	if c.Cwd == "" {
		c.Cwd = c.Workspace
	}
	var err error
	switch ev.HookEventName {
	case PreToolUse:
		c.Tool = ev.ToolName
		c.Args, err = object(ev.ToolInput)
	case BeforeShellExecution:
		c.Tool, c.Args = "Shell", map[string]any{"command": ev.Command}
		if ev.Cwd != "" {
			c.Args["cwd"] = ev.Cwd
		}
	case BeforeReadFile:
		c.Tool, c.Args = "Read", map[string]any{"file_path": ev.FilePath}
	case BeforeMCPExecution:
		c.Tool = "mcp__cursor__" + ev.ToolName
		c.Args, err = object(ev.ToolInput)
	default:
		return c, fmt.Errorf("Cursor hook event %q is not one this hook takes (%s, %s, %s, %s)", ev.HookEventName, PreToolUse, BeforeShellExecution, BeforeMCPExecution, BeforeReadFile)
	}
	switch {
	case err != nil:
		return c, err
	case ev.ConversationID == "":
		return c, errors.New("the Cursor hook event has no conversation_id")
	case c.Tool == "" || c.Tool == "mcp__cursor__":
		return c, errors.New("the Cursor hook event names no tool")
	}
	c.Args = hookflow.WithoutBulk(c.Args, "content", "contents", "old_string", "new_string")
	c.Session = hookflow.SessionID("cursor", ev.ConversationID)
	if c.Workspace == "" {
		c.NoWorkspace = fmt.Sprintf("toolperm: this %s event names no workspace (its workspace_roots is empty), so %s is denied: "+
			"open the project as a folder or a workspace in Cursor, whose folders every event carries as workspace_roots "+
			"(the command hook also takes --workspace <project dir>); the event's cwd %q is not a workspace: it follows the model's cd",
			ev.HookEventName, c.Tool, ev.Cwd)
	}
	return c, nil
}

// object reads tool_input: an object, or a JSON string holding one
// (beforeMCPExecution).
func object(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = []byte(s)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("the Cursor hook event's tool_input is not an object: %w", err)
	}
	// The object in a string is not among the event's members that
	// hookflow.CheckKeys reads through.
	if err := api.DuplicateKeys(raw); err != nil {
		return nil, hookflow.Ambiguous(fmt.Errorf("tool_input: %w", err))
	}
	return out, nil
}

// CanAsk says Cursor shows its own prompt for an ask of this event:
// beforeReadFile takes allow or deny only.
func CanAsk(c hookflow.Call) bool { return c.Event != BeforeReadFile }

// Output is Cursor's answer to a before-event.
type Output struct {
	Permission   string `json:"permission"`
	UserMessage  string `json:"user_message,omitempty"`
	AgentMessage string `json:"agent_message,omitempty"`
}

// Reply is Cursor's answer to the verdict: the reason goes to the person
// and to the model.
func Reply(_ hookflow.Call, v hookflow.Verdict) hookflow.Reply {
	v = v.Normal()
	out := hookflow.JSON(Output{Permission: v.Decision, UserMessage: v.Reason, AgentMessage: v.Reason})
	return hookflow.Reply{Stdout: out, Body: out}
}
