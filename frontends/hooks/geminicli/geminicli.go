// Package geminicli maps Gemini CLI's tool hook events (BeforeTool,
// AfterTool command hooks; docs/hooks/reference.md of
// google-gemini/gemini-cli) to the PDP's calls and its decisions back to
// Gemini CLI's hook output.
//
// Gemini CLI reads only the top-level "decision" and "reason" of a
// BeforeTool answer (packages/core/src/hooks/types.ts): "deny" blocks the
// call and sends the reason to the model, "ask" makes Gemini CLI ask for
// confirmation (even with --yolo; headless, the turn ends without the
// tool), "allow" lets its own policy go on. Claude Code's
// hookSpecificOutput.permissionDecision is ignored, and an exit status
// other than 0 and 2 is a warning and the tool runs, so every answer
// here is exit 0 with a decision.
package geminicli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolperm/pdp/frontends/hooks/hookflow"
)

// Agent is the name the PDP knows Gemini CLI by.
const Agent = "gemini-cli"

// The hook events this adapter takes.
const (
	BeforeTool = "BeforeTool"
	AfterTool  = "AfterTool"
)

// McpContext is what Gemini CLI says of an MCP tool's server.
type McpContext struct {
	ServerName string `json:"server_name"`
	ToolName   string `json:"tool_name"`
}

// Event is a tool hook event as Gemini CLI writes it on the hook's stdin.
type Event struct {
	SessionID      string         `json:"session_id"`
	TranscriptPath string         `json:"transcript_path"`
	Cwd            string         `json:"cwd"`
	HookEventName  string         `json:"hook_event_name"`
	Timestamp      string         `json:"timestamp"`
	ToolName       string         `json:"tool_name"`
	ToolInput      map[string]any `json:"tool_input"`
	McpContext     *McpContext    `json:"mcp_context"`
}

// bulkyArgs are file contents and edit strings.
var bulkyArgs = []string{"content", "old_string", "new_string"}

// Parse maps one Gemini CLI hook event to the call the PDP judges, in
// session "gemini:<session_id>". An MCP tool (mcp_<server>_<tool>) is
// named mcp__<server>__<tool> from its mcp_context, so its capability is
// mcp.<server>.<tool> as for every agent. AfterTool carries no id of the
// call, so there is no ask to record it on: it is taken and ignored.
func Parse(raw []byte) (hookflow.Call, error) {
	if name, err := hookflow.CheckKeys(raw, Event{}); err != nil {
		c := hookflow.Call{Agent: Agent, Event: name}
		if name == AfterTool {
			c.Kind = hookflow.Outcome
		}
		return c, err
	}
	var ev Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return hookflow.Call{}, fmt.Errorf("the Gemini CLI hook event is not JSON: %w", err)
	}
	c := hookflow.Call{Agent: Agent, Event: ev.HookEventName, Tool: ev.ToolName, Cwd: ev.Cwd, Args: hookflow.WithoutBulk(ev.ToolInput, bulkyArgs...)}
	switch ev.HookEventName {
	case BeforeTool:
		c.Kind = hookflow.Pre
	case AfterTool:
		c.Kind = hookflow.Outcome
	default:
		return c, fmt.Errorf("Gemini CLI hook event %q is not one this hook takes (%s, %s)", ev.HookEventName, BeforeTool, AfterTool)
	}
	switch {
	case ev.ToolName == "":
		return c, errors.New("the Gemini CLI hook event names no tool")
	case ev.SessionID == "":
		return c, errors.New("the Gemini CLI hook event has no session_id")
	}
	if m := ev.McpContext; m != nil && m.ServerName != "" && m.ToolName != "" {
		c.Tool = "mcp__" + m.ServerName + "__" + m.ToolName
	} else if strings.HasPrefix(ev.ToolName, "mcp_") {
		// An MCP name without its context: its server cannot be told
		// from its tool, so no capability matches it and it is denied.
		c.Tool = "mcp__" + strings.TrimPrefix(ev.ToolName, "mcp_")
	}
	c.Session = hookflow.SessionID("gemini", ev.SessionID)
	c.FileFree = fileFree[ev.ToolName]
	return c, nil
}

// fileFree are Gemini CLI tools that name no file and run nothing.
var fileFree = map[string]bool{"google_web_search": true, "write_todos": true, "ask_user": true, "enter_plan_mode": true, "exit_plan_mode": true}

// Output is a BeforeTool answer: Gemini CLI reads these two fields.
type Output struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// Reply is Gemini CLI's answer to the verdict; AfterTool gets {}.
func Reply(c hookflow.Call, v hookflow.Verdict) hookflow.Reply {
	if c.Kind == hookflow.Outcome {
		return hookflow.Reply{Stdout: []byte("{}\n"), Body: []byte("{}\n")}
	}
	v = v.Normal()
	out := hookflow.JSON(Output{Decision: v.Decision, Reason: v.Reason})
	return hookflow.Reply{Stdout: out, Body: out}
}
