// Package claudecode makes the PDP the permission engine of Claude Code
// through its PreToolUse hook: it reads the hook's event, turns it into a
// decide request (sub-agents become child sessions of the main session),
// and writes the hook's answer. Every failure is a deny: exiting with an
// error would let the tool run. The events that follow a call
// (PostToolUse, PostToolUseFailure, PermissionDenied) say what became of
// an ask Claude Code showed in its own prompt.
package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// The hook events the hook takes.
const (
	PreToolUse         = "PreToolUse"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
	PermissionDenied   = "PermissionDenied"
)

// Event is a tool hook event as Claude Code sends it on stdin.
type Event struct {
	SessionID      string         `json:"session_id"`
	TranscriptPath string         `json:"transcript_path"`
	Cwd            string         `json:"cwd"`
	PermissionMode string         `json:"permission_mode"`
	HookEventName  string         `json:"hook_event_name"`
	ToolName       string         `json:"tool_name"`
	ToolInput      map[string]any `json:"tool_input"`
	ToolUseID      string         `json:"tool_use_id"`
	AgentID        string         `json:"agent_id"`
	AgentType      string         `json:"agent_type"`
}

// ReadEvent decodes one event. Unknown fields are fine: the hook
// protocol grows.
func ReadEvent(r io.Reader) (Event, error) {
	var ev Event
	raw, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return ev, fmt.Errorf("reading the hook event: %w", err)
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return ev, fmt.Errorf("the hook event is not JSON: %w", err)
	}
	switch {
	case ev.HookEventName != PreToolUse && ev.Outcome() == "":
		return ev, fmt.Errorf("hook event %q is not one this hook takes (%s, %s, %s, %s)", ev.HookEventName, PreToolUse, PostToolUse, PostToolUseFailure, PermissionDenied)
	case ev.ToolName == "":
		return ev, errors.New("the hook event names no tool")
	case ev.SessionID == "":
		return ev, errors.New("the hook event has no session_id")
	}
	return ev, nil
}

// Outcome is what an event after the call says became of it, recorded
// as the outcome of the call's ask (a record of what Claude Code did,
// never a person's answer): the tool ran (PostToolUse, also when it then
// failed: PostToolUseFailure), allow_once; or Claude Code refused it
// (PermissionDenied), deny. "" for PreToolUse and anything else.
func (ev Event) Outcome() string {
	switch ev.HookEventName {
	case PostToolUse, PostToolUseFailure:
		return "allow_once"
	case PermissionDenied:
		return "deny"
	}
	return ""
}

var unsafeIDChars = regexp.MustCompile(`[^A-Za-z0-9._:-]`)

// sessionID makes an id the PDP accepts from Claude Code's ids.
func sessionID(parts ...string) string {
	id := unsafeIDChars.ReplaceAllString(strings.Join(parts, ":"), "_")
	if len(id) > 128 {
		id = id[:128]
	}
	return id
}

// MainSession is the PDP session of the Claude Code session.
func (ev Event) MainSession() string { return sessionID("cc", ev.SessionID) }

// ChildSession is the PDP session of the sub-agent that made the call,
// or "" for the main agent.
func (ev Event) ChildSession() string {
	if ev.AgentID == "" {
		return ""
	}
	return sessionID("cc", ev.SessionID, "agent", ev.AgentID)
}

// Session is the session the call is decided in.
func (ev Event) Session() string {
	if child := ev.ChildSession(); child != "" {
		return child
	}
	return ev.MainSession()
}

// bulkyArgs are tool inputs the policy never needs (file contents, edit
// strings); they stay out of the request and the audit trail.
var bulkyArgs = []string{"content", "old_string", "new_string", "edits", "new_source"}

// Args are the tool input the PDP judges: everything but file contents.
func (ev Event) Args() map[string]any {
	out := make(map[string]any, len(ev.ToolInput))
	for k, v := range ev.ToolInput {
		out[k] = v
	}
	for _, k := range bulkyArgs {
		delete(out, k)
	}
	return out
}

// fileFreeTools are Claude Code tools that name no file and run nothing
// themselves: a sub-agent's (Agent, formerly Task) own calls come through the hook one by
// one. Every other tool, including any not listed (MCP tools, tools
// Claude Code adds later), may touch files.
var fileFreeTools = map[string]bool{
	"Agent":           true,
	"AskUserQuestion": true,
	"ListAgents":      true,
	"ToolSearch":      true,
	"CronList":        true,
	"SendMessage":     true,
	"TaskCreate":      true,
	"TaskGet":         true,
	"TaskList":        true,
	"TaskUpdate":      true,
	"ExitPlanMode":    true,
	"Task":            true,
	"TodoWrite":       true,
	"WebSearch":       true,
}

// FileFree reports whether the call's tool is known to touch no file, so
// it has nothing a workspace would confine.
func (ev Event) FileFree() bool { return fileFreeTools[ev.ToolName] }

// Output is the hook's answer on stdout.
type Output struct {
	HookSpecificOutput HookSpecificOutput `json:"hookSpecificOutput"`
}

// HookSpecificOutput carries the permission decision.
type HookSpecificOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

// Answer is the hook output for a decision; anything but allow or ask is
// a deny.
func Answer(decision, reason string) Output {
	if decision != "allow" && decision != "ask" {
		decision = "deny"
	}
	return Output{HookSpecificOutput{HookEventName: "PreToolUse", PermissionDecision: decision, PermissionDecisionReason: reason}}
}

// Deny is the hook output when no decision could be had.
func Deny(err error) Output {
	return Answer("deny", "toolperm could not decide, so the call is denied: "+err.Error())
}
