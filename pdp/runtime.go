package pdp

import (
	"regexp"
	"slices"
	"strings"

	"github.com/toolperm/pdp/api"
)

// agentPattern is what an agent's name in input.runtime may be: the
// catalogue joins it to a tool name as "<agent>/<tool>".
var agentPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// validateRuntime checks what a runtime says about itself: facts the
// policy may read, so they are bounded like every other input.
func validateRuntime(rt *api.Runtime) error {
	if rt == nil {
		return nil
	}
	if rt.Agent != "" && !agentPattern.MatchString(rt.Agent) {
		return invalid("invalid_runtime", "runtime.agent must be 1-64 characters of [a-z0-9-], got %q", truncate(rt.Agent))
	}
	if len(rt.PermissionMode) > 64 {
		return invalid("invalid_runtime", "runtime.permission_mode is longer than 64 characters")
	}
	return nil
}

// runtimeInput is input.runtime: only the facts the runtime gave, nil
// when it gave none.
func runtimeInput(rt *api.Runtime) map[string]any {
	if rt == nil || (rt.Agent == "" && rt.PermissionMode == "") {
		return nil
	}
	out := map[string]any{}
	if rt.Agent != "" {
		out["agent"] = rt.Agent
	}
	if rt.PermissionMode != "" {
		out["permission_mode"] = rt.PermissionMode
	}
	return out
}

// Lookup is the catalogue entry of a tool as the named runtime calls it:
// "<agent>/<tool>" when the catalogue declares the tool for that agent
// (the same name means different things in two agents), else "<tool>".
// capability.rego looks the entry up the same way. A tool name with a
// "/" is no catalogue key of its own: "codex/apply_patch" named by
// another runtime (or by none) is an unknown tool, never Codex's entry.
func (c Catalogue) Lookup(rt *api.Runtime, tool string) (ToolEntry, bool) {
	if tool == "" || strings.Contains(tool, "/") {
		return ToolEntry{}, false
	}
	if rt != nil && rt.Agent != "" {
		if e, ok := c[rt.Agent+"/"+tool]; ok {
			return e, true
		}
	}
	e, ok := c[tool]
	return e, ok
}

// commandArgName is the argument that holds a call's shell command:
// "command", unless the tool's catalogue entry declares "command" as
// another kind (Codex's apply_patch hook sends its patch there: it is
// no shell command) or declares no "command" but another top-level
// argument of kind command (Codex's exec_command: "cmd"). "" when the
// call has none.
func commandArgName(e ToolEntry, known bool) string {
	if !known {
		return "command"
	}
	if k, ok := e.Args["command"]; ok {
		if k == KindCommand {
			return "command"
		}
		return ""
	}
	var names []string
	for sel, k := range e.Args {
		if k == KindCommand && sel != "argv" && !strings.ContainsAny(sel, ".[") {
			names = append(names, sel)
		}
	}
	if len(names) == 0 {
		return "command"
	}
	slices.Sort(names)
	return names[0]
}

// stdinArgNames are the top-level arguments of kind stdin a tool's
// catalogue entry declares: text typed into a running process.
func stdinArgNames(e ToolEntry) []string {
	var names []string
	for sel, k := range e.Args {
		if k == KindStdin && !strings.ContainsAny(sel, ".[") {
			names = append(names, sel)
		}
	}
	slices.Sort(names)
	return names
}
