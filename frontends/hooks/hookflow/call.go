package hookflow

import (
	"regexp"
	"strings"

	"github.com/toolperm/pdp/client"
)

// Kind is what an agent's event asks of the hook.
type Kind int

// The kinds of events.
const (
	// Pre asks before a call runs (PreToolUse, BeforeTool, preToolUse).
	Pre Kind = iota
	// Permission is the agent's own permission prompt for a call it is
	// about to show (PermissionRequest): answered from the PDP's decision
	// for the same call.
	Permission
	// Outcome says what became of a call after it (PostToolUse): recorded
	// on its ask, never a decision.
	Outcome
)

// Call is one hook event as the PDP judges it: the agent adapter's pure
// mapping of the agent's own payload.
type Call struct {
	// Agent names the agent (claude-code, codex, gemini-cli, cursor).
	Agent string
	// Event is the agent's own event name, for the reply.
	Event string
	Kind  Kind
	// Session is the PDP session of the agent session; Child that of the
	// sub-agent that made the call, "" for the main agent.
	Session, Child string
	Tool           string
	Args           map[string]any
	Cwd            string
	ToolUseID      string
	// PermissionMode is the agent's own mode, a fact for the policy.
	PermissionMode string
	// Workspace is the project root the event names (Cursor's
	// workspace_roots), "" when it names none: a later cwd never is one.
	Workspace string
	// NoWorkspace is set by an agent whose events name the project
	// (Cursor): without Workspace, and without Options.Workspace, a call
	// that may touch files is denied with it as the reason (how to give
	// one) instead of decided in a session whose workspace the server
	// would take from the call's cwd.
	NoWorkspace string
	// Outcome is what an Outcome event records (allow_once, deny).
	Outcome string
	// FileFree: the tool is known to touch no file.
	FileFree bool
}

// DecidedIn is the session the call is decided in.
func (c Call) DecidedIn() string {
	if c.Child != "" {
		return c.Child
	}
	return c.Session
}

// Request is the decide request of the call.
func (c Call) Request() client.DecideRequest {
	return client.DecideRequest{SessionID: c.DecidedIn(), Tool: c.Tool, Args: c.Args, Cwd: c.Cwd, ToolUseID: c.ToolUseID,
		Runtime: &client.Runtime{Agent: c.Agent, PermissionMode: c.PermissionMode}}
}

var unsafeIDChars = regexp.MustCompile(`[^A-Za-z0-9._:-]`)

// SessionID makes an id the PDP accepts from an agent's ids: parts joined
// by ":", anything else replaced by "_", at most 128 characters.
func SessionID(parts ...string) string {
	id := unsafeIDChars.ReplaceAllString(strings.Join(parts, ":"), "_")
	if len(id) > 128 {
		id = id[:128]
	}
	return id
}

// WithoutBulk is args without the keys that carry file contents or edit
// strings: the policy never needs them, and they stay out of the request
// and the audit trail.
func WithoutBulk(args map[string]any, bulky ...string) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = v
	}
	for _, k := range bulky {
		delete(out, k)
	}
	return out
}
