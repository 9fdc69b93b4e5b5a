package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/toolperm/pdp/frontends/hooks/hookflow"
)

// Agent is the name the PDP knows Claude Code by.
const Agent = "claude-code"

// PermissionRequest is the event Claude Code sends before it shows its
// own permission dialog.
const PermissionRequest = "PermissionRequest"

// Parse maps one Claude Code hook event to the call the PDP judges
// (the hookflow form of ReadEvent): PreToolUse decides, PermissionRequest
// is answered from the PDP's decision of the same call, and the events
// after a call record its outcome.
func Parse(raw []byte) (hookflow.Call, error) {
	if name, err := hookflow.CheckKeys(raw, Event{}); err != nil {
		return refused(name), err
	}
	ev, err := ReadEvent(bytes.NewReader(raw))
	// ReadEvent takes no PermissionRequest; one that decodes whole and
	// names its tool and session is taken here. One whose fields do not
	// decode is refused like any event: the fields left out (tool_input,
	// agent_id) would be judged as absent.
	if err != nil && !(ev.HookEventName == PermissionRequest && ev.ToolName != "" && ev.SessionID != "" && json.Unmarshal(raw, &Event{}) == nil) {
		return hookflow.Call{}, err
	}
	c := hookflow.Call{Agent: Agent, Event: ev.HookEventName, Session: ev.MainSession(), Child: ev.ChildSession(),
		Tool: ev.ToolName, Args: ev.Args(), Cwd: ev.Cwd, ToolUseID: ev.ToolUseID, PermissionMode: ev.PermissionMode,
		Outcome: ev.Outcome(), FileFree: ev.FileFree()}
	switch {
	case ev.HookEventName == PermissionRequest:
		c.Kind = hookflow.Permission
	case c.Outcome != "":
		c.Kind = hookflow.Outcome
	}
	return c, nil
}

// refused is the call of an event refused before it is read: only what
// the reply needs, the kind of the event the agent sent (name, its exact
// hook_event_name), so that it gets its own deny.
func refused(name string) hookflow.Call {
	c := hookflow.Call{Agent: Agent, Event: name}
	switch {
	case name == PermissionRequest:
		c.Kind = hookflow.Permission
	case Event{HookEventName: name}.Outcome() != "":
		c.Kind = hookflow.Outcome
	}
	return c
}

// Reply is Claude Code's answer to the verdict: PreToolUse's
// permissionDecision; for PermissionRequest allow or deny, and nothing
// for an ask (Claude Code's dialog asks); nothing after a call.
func Reply(c hookflow.Call, v hookflow.Verdict) hookflow.Reply {
	switch c.Kind {
	case hookflow.Outcome:
		return hookflow.Reply{Body: []byte("{}\n")}
	case hookflow.Permission:
		v = v.Normal()
		if v.Decision == "ask" {
			return hookflow.Reply{Body: []byte("{}\n")}
		}
		message := ""
		if v.Decision == "deny" {
			message = v.Reason
		}
		return hookflow.PermissionReply(PermissionRequest, v.Decision, message)
	}
	out, err := json.Marshal(Answer(v.Decision, v.Reason))
	if err != nil {
		panic(fmt.Sprintf("claudecode: encoding an answer: %v", err))
	}
	out = append(out, '\n')
	return hookflow.Reply{Stdout: out, Body: out}
}
