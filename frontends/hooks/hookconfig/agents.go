package hookconfig

import (
	"errors"
	"fmt"
	"github.com/toolperm/pdp/frontends/hooks/hookflow"
	"path/filepath"
	"regexp"
	"strings"
)

// Agent is what pdp init knows of one agent's hook configuration: its
// name and its settings files (hookflow.Settings, from the agent's own
// description).
type Agent struct {
	// Name is the agent as pdp hook and the hook endpoint name it.
	Name string
	hookflow.Settings
}

// For is the configuration pdp init writes for an agent.
func For(a hookflow.Agent) Agent { return Agent{Name: a.Name, Settings: a.Settings} }

// Lookup is the agent of that name among agents.
func Lookup(agents []hookflow.Agent, name string) (Agent, error) {
	var names []string
	for _, a := range agents {
		if a.Name == name {
			return For(a), nil
		}
		names = append(names, a.Name)
	}
	return Agent{}, fmt.Errorf("unknown agent %q: one of %s", name, strings.Join(names, ", "))
}

// Where says which of an agent's files is meant.
type Where struct {
	// Project is the project directory for --project, "" for the user's
	// file.
	Project string
	// Home is the user's home directory.
	Home string
	// Getenv reads the variables an agent may keep its files under
	// (Settings.HomeEnv: $CODEX_HOME); nil reads none.
	Getenv func(string) string
}

// File is the agent's configuration file.
func (a Agent) File(w Where) (string, error) {
	switch {
	case w.Project != "":
		return filepath.Join(w.Project, a.ProjectFile), nil
	case a.HomeEnv != "" && w.Getenv != nil && w.Getenv(a.HomeEnv) != "":
		return filepath.Join(w.Getenv(a.HomeEnv), filepath.Base(a.UserFile)), nil
	case w.Home == "":
		return "", errors.New("no home directory is known: pass --project or set HOME")
	}
	return filepath.Join(w.Home, a.UserFile), nil
}

// Hook is what the PDP's hook runs: a command, or an HTTP hook.
type Hook struct {
	// URL is the PDP's base URL; "" leaves the command's default.
	URL string
	// HTTP installs an HTTP hook (Claude Code) instead of a command.
	HTTP bool
	// TokenEnv names the variable holding the dispatcher token (HTTP).
	TokenEnv string
	// Binary is the program of the hook command: "" is pdp; pdp-hook,
	// the laptop's binary, or a path to either.
	Binary string
}

// hookBinary is a program the hook command may run: pdp or pdp-hook (on
// Windows with .exe), by name on the agent's PATH or by an absolute path
// (C:/… on Windows) in which nothing needs quoting. A relative path would
// be looked up in the agent's working directory — the project, where a
// repository could plant its own "pdp" — and a word with "=" would be
// read by the shell as an assignment.
var hookBinary = regexp.MustCompile(`^(([A-Za-z]:)?/[A-Za-z0-9._/@%+,~-]*/)?pdp(-hook)?(\.exe)?$`)

const defaultURL = "http://127.0.0.1:8181"

// failClosed ends the hook command of the agents without a failClosed
// setting (Claude Code, Codex, Gemini CLI): every status but the hook's
// own 0 becomes 2, the status that blocks the call.
const failClosed = " || exit 2"

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// handler is the hook entry for the agent.
func (a Agent) handler(h Hook) (*object, error) {
	o := newObject()
	if h.HTTP {
		if !a.HTTP {
			return nil, fmt.Errorf("%s has no HTTP hooks: leave out --http to install the command hook `pdp hook %s`", a.Name, a.Name)
		}
		tokenEnv := h.TokenEnv
		if tokenEnv == "" {
			tokenEnv = "PDP_TOKEN"
		}
		if !envName.MatchString(tokenEnv) {
			return nil, fmt.Errorf("%q is not an environment variable's name", tokenEnv)
		}
		base := h.URL
		if base == "" {
			base = defaultURL
		}
		headers := newObject()
		headers.set("Authorization", "Bearer $"+tokenEnv)
		o.set("type", "http")
		o.set("url", strings.TrimRight(base, "/")+"/v1/hooks/"+a.Name)
		o.set("headers", headers)
		o.set("allowedEnvVars", []any{tokenEnv})
		// A failing HTTP hook blocks instead of letting the tool run.
		o.set("onFailure", "block")
		return o, nil
	}
	binary := h.Binary
	if binary == "" {
		binary = "pdp"
	}
	if !hookBinary.MatchString(binary) {
		return nil, fmt.Errorf("--hook-binary %q: want pdp or pdp-hook (pdp.exe or pdp-hook.exe on Windows), by name on the agent's PATH "+
			"or by an absolute path with nothing a hook command would have to quote (no spaces, backslashes or =; on Windows write C:/Tools/pdp-hook.exe); a relative path would be looked up in the project", binary)
	}
	command := binary + " hook " + a.Name
	if h.URL != "" {
		if strings.ContainsAny(h.URL, " \t\n'\"`$\\;&|<>") {
			return nil, fmt.Errorf("--url %q holds characters a hook command would have to quote", h.URL)
		}
		command += " --url " + h.URL
	}
	if !a.Flat {
		// A hook that cannot run at all (pdp not on the agent's PATH, killed)
		// exits with another status, which these agents take for a failed
		// hook and run the tool; exit status 2 blocks in all three.
		command += failClosed
		o.set("type", "command")
	}
	o.set("command", command)
	if a.Flat {
		// Cursor runs the action when a hook fails unless it is told not to.
		o.set("failClosed", true)
	}
	return o, nil
}

// ours says whether a hook entry is the PDP's hook for this agent, as
// pdp init writes it: a command that is `pdp hook <agent>` or `pdp-hook
// hook <agent>` (by any path to either) with nothing but its flags and `|| exit 2` after it, or an HTTP hook to
// /v1/hooks/<agent> that sends a bearer token from a variable it allows.
// A command that only names the hook (`echo pdp hook …`, `x && pdp hook
// …`), or another server's hook endpoint on the same path, is not its
// own: --remove leaves it.
func (a Agent) ours(v any) bool {
	o, ok := v.(*object)
	if !ok {
		return false
	}
	if cmd, ok := o.vals["command"].(string); ok {
		return regexp.MustCompile(`^\s*(\S*/)?pdp(-hook)?(\.exe)? hook ` + regexp.QuoteMeta(a.Name) + `(\s+[^\s;&|<>()$` + "`" + `'"\\]+)*(\s*\|\|\s*exit 2)?\s*$`).MatchString(cmd)
	}
	url, ok := o.vals["url"].(string)
	if !ok || !strings.HasSuffix(strings.TrimRight(url, "/"), "/v1/hooks/"+a.Name) {
		return false
	}
	headers, _ := o.vals["headers"].(*object)
	allowed, _ := o.vals["allowedEnvVars"].([]any)
	if headers == nil {
		return false
	}
	auth, _ := headers.vals["Authorization"].(string)
	for _, name := range allowed {
		if n, ok := name.(string); ok && auth == "Bearer $"+n {
			return true
		}
	}
	return false
}
