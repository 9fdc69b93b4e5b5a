// Package codex maps Codex CLI's hook events (codex-rs/hooks: PreToolUse,
// PermissionRequest, PostToolUse command hooks) to the PDP's calls and
// its decisions back to Codex's hook output.
//
// Codex blocks a call on deny only: its PreToolUse answers "ask" and a
// bare "allow" are unsupported (codex-rs/hooks/src/engine/output_parser.rs)
// and the call runs. So this adapter never answers ask or allow: an
// allow prints nothing, and an ask is held at the PDP for a person's
// answer (hookflow) and otherwise denied, saying where to answer it.
// A deny is exit status 2 with the reason on stderr (command hooks), or
// {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",…}}
// (the HTTP endpoint's body). A hook that exits with any other status,
// times out or prints unreadable JSON fails open in Codex, so every
// answer here is one of those two.
package codex

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolperm/pdp/frontends/hooks/hookflow"
)

// Agent is the name the PDP knows Codex by.
const Agent = "codex"

// The hook events this adapter takes.
const (
	PreToolUse        = "PreToolUse"
	PermissionRequest = "PermissionRequest"
	PostToolUse       = "PostToolUse"
)

// Event is a tool hook event as Codex writes it on the hook's stdin
// (codex-rs/hooks/schema/generated/pre-tool-use.command.input.schema.json).
type Event struct {
	SessionID      string         `json:"session_id"`
	TurnID         string         `json:"turn_id"`
	AgentID        string         `json:"agent_id"`
	AgentType      string         `json:"agent_type"`
	Cwd            string         `json:"cwd"`
	HookEventName  string         `json:"hook_event_name"`
	Model          string         `json:"model"`
	PermissionMode string         `json:"permission_mode"`
	ToolName       string         `json:"tool_name"`
	ToolInput      map[string]any `json:"tool_input"`
	ToolUseID      string         `json:"tool_use_id"`
}

// Parse maps one Codex hook event to the call the PDP judges. The
// session is "codex:<session_id>" (Codex's thread); a sub-agent's calls
// are decided in "codex:<session_id>:agent:<agent_id>", a child of it.
func Parse(raw []byte) (hookflow.Call, error) {
	if name, err := hookflow.CheckKeys(raw, Event{}); err != nil {
		c := hookflow.Call{Agent: Agent, Event: name}
		c.Kind, _ = kindOf(name)
		return c, err
	}
	var ev Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return hookflow.Call{}, fmt.Errorf("the Codex hook event is not JSON: %w", err)
	}
	c := hookflow.Call{Agent: Agent, Event: ev.HookEventName, Tool: ev.ToolName, Cwd: ev.Cwd, ToolUseID: ev.ToolUseID,
		PermissionMode: ev.PermissionMode, Args: hookflow.WithoutBulk(ev.ToolInput)}
	var known bool
	if c.Kind, known = kindOf(ev.HookEventName); c.Kind == hookflow.Outcome {
		c.Outcome = "allow_once"
	}
	if !known {
		return c, fmt.Errorf("Codex hook event %q is not one this hook takes (%s, %s, %s)", ev.HookEventName, PreToolUse, PermissionRequest, PostToolUse)
	}
	switch {
	case ev.ToolName == "":
		return c, errors.New("the Codex hook event names no tool")
	case ev.SessionID == "":
		return c, errors.New("the Codex hook event has no session_id")
	}
	c.Session = hookflow.SessionID("codex", ev.SessionID)
	if ev.AgentID != "" {
		c.Child = hookflow.SessionID("codex", ev.SessionID, "agent", ev.AgentID)
	}
	c.FileFree = ev.ToolName == "spawn_agent"
	return c, nil
}

// kindOf is the kind of a Codex event; false for one this hook does not
// take.
func kindOf(event string) (hookflow.Kind, bool) {
	switch event {
	case PreToolUse:
		return hookflow.Pre, true
	case PermissionRequest:
		return hookflow.Permission, true
	case PostToolUse:
		return hookflow.Outcome, true
	}
	return hookflow.Pre, false
}

type preToolUseOutput struct {
	HookSpecificOutput preToolUseDecision `json:"hookSpecificOutput"`
}

type preToolUseDecision struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

// Reply is Codex's answer to the verdict (nothing after a call). An ask reaching here (the flow
// turns every ask into a deny for Codex) is denied as well.
func Reply(c hookflow.Call, v hookflow.Verdict) hookflow.Reply {
	if c.Kind == hookflow.Outcome {
		// After the call there is nothing to allow or deny: a deny here
		// would only show the model an error for a call that ran.
		return hookflow.Reply{Body: []byte("{}\n")}
	}
	v = v.Normal()
	if c.Kind == hookflow.Permission {
		if v.Decision == "allow" {
			return hookflow.PermissionReply(PermissionRequest, "allow", "")
		}
		return hookflow.PermissionReply(PermissionRequest, "deny", nonEmpty(v.Reason))
	}
	if v.Decision == "allow" {
		return hookflow.Reply{Body: []byte("{}\n")}
	}
	return hookflow.Reply{
		Stderr: nonEmpty(v.Reason) + "\n",
		Exit:   2,
		Body:   hookflow.JSON(preToolUseOutput{preToolUseDecision{PreToolUse, "deny", nonEmpty(v.Reason)}}),
	}
}

// nonEmpty: Codex takes a deny only with a non-empty reason.
func nonEmpty(reason string) string {
	if reason == "" {
		return "toolperm denied the call"
	}
	return reason
}
