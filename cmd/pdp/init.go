package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/frontends/hooks/hookconfig"
	"github.com/toolperm/pdp/internal/agents"
)

func initCommand() *cobra.Command {
	var agent, url, tokenEnv, binary string
	var project, http, remove bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Install the PDP's hook in an agent's own configuration (Claude Code, Codex, Gemini CLI, Cursor)",
		Long: `pdp init --agent claude-code|codex|gemini-cli|cursor writes the agent's hook
configuration so every tool call asks the PDP:

  claude-code  ~/.claude/settings.json   (--project: .claude/settings.json)
               PreToolUse, PostToolUse, PostToolUseFailure, PermissionDenied
  codex        ~/.codex/hooks.json ($CODEX_HOME)   (--project: .codex/hooks.json)
               PreToolUse, PermissionRequest, PostToolUse
  gemini-cli   ~/.gemini/settings.json   (--project: .gemini/settings.json)
               BeforeTool
  cursor       ~/.cursor/hooks.json      (--project: .cursor/hooks.json)
               preToolUse, beforeShellExecution, beforeMCPExecution, beforeReadFile
               ("version": 1, "failClosed": true)

The hook is the command "pdp hook <agent> || exit 2" (with --url, "pdp hook
<agent> --url U || exit 2"): a hook that cannot run (pdp not on the agent's
PATH) exits 2, which blocks the call, instead of another status on which
Claude Code, Codex and Gemini CLI run the tool; Cursor's entry is
"pdp hook cursor" with "failClosed": true. --hook-binary names the program
the hook runs: pdp-hook (the laptop's binary, which asks a server and
leaves the server's parts out) or a path to pdp or pdp-hook; pdp-hook init
writes pdp-hook by default. When that program is not on this PATH, an
agent started from here could not run it: the hook names the absolute path
of the running pdp instead, and says so (a temporary build of go run is only
warned about).
With --http (Claude Code only) it is an HTTP hook to U/v1/hooks/claude-code
with "onFailure": "block" and the token from $PDP_TOKEN (--token-env) through
"headers" and "allowedEnvVars".

Every other setting and hook stays as it was, in its order. The file is
written atomically, the file as it was kept beside it as <file>.pdp-backup;
a second run changes nothing (an event that has the PDP's hook in either
form is left as it is); a file that does not parse is refused and left
alone. --remove takes out exactly the PDP's own hook entries.

pdp init with no --agent lists the agents it finds installed and where
the PDP's hook is configured.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, _ := os.UserHomeDir()
			where := hookconfig.Where{Home: home, Getenv: os.Getenv}
			if project {
				dir, err := os.Getwd()
				if err != nil {
					return err
				}
				where.Project = dir
			}
			if agent == "" {
				if http || remove || url != "" {
					return fmt.Errorf("--http, --url and --remove need --agent (one of %s)", agentNames())
				}
				return listAgents(cmd, where)
			}
			a, err := hookconfig.Lookup(agents.All, agent)
			if err != nil {
				return err
			}
			file, err := a.File(where)
			if err != nil {
				return err
			}
			var change hookconfig.Change
			if remove {
				change, err = hookconfig.Remove(a, file)
			} else {
				if http && cmd.Flags().Changed("hook-binary") {
					return errors.New("--hook-binary names the program of a command hook; an HTTP hook (--http) runs none")
				}
				if !http {
					var note string
					binary, note = hookProgram(binary, !cmd.Flags().Changed("hook-binary"))
					if note != "" {
						fmt.Fprintln(cmd.ErrOrStderr(), note)
					}
				}
				change, err = hookconfig.Install(a, file, hookconfig.Hook{URL: url, HTTP: http, TokenEnv: tokenEnv, Binary: binary})
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), change)
			return nil
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "the agent: "+agentNames())
	cmd.Flags().BoolVar(&project, "project", false, "the project's configuration in the current directory instead of the user's")
	cmd.Flags().BoolVar(&http, "http", false, "an HTTP hook to the server instead of a command (Claude Code)")
	cmd.Flags().StringVar(&url, "url", "", "the PDP's base URL (default: the hook's own, http://127.0.0.1:8181)")
	cmd.Flags().StringVar(&tokenEnv, "token-env", "PDP_TOKEN", "with --http: the variable Claude Code reads the dispatcher token from")
	cmd.Flags().BoolVar(&remove, "remove", false, "take the PDP's hook entries out")
	cmd.Flags().StringVar(&binary, "hook-binary", binaryName, "the program the hook command runs: pdp, pdp-hook, or a path to either")
	return cmd
}

// hookProgram is the program the hook command names, and what to tell
// the person about it. A bare name the agent would look up on its PATH
// is kept when it is on this PATH. When it is not, a hook that names it
// could not run and the agent would block every tool call: the absolute
// path of the running pdp is written instead (unless the name was given
// with --hook-binary, or this pdp is a temporary build of go run), or a
// warning says so.
func hookProgram(name string, mayResolve bool) (string, string) {
	if strings.Contains(name, "/") {
		return name, ""
	}
	if _, err := exec.LookPath(name); err == nil {
		return name, ""
	}
	notOnPath := fmt.Sprintf("%s is not on this PATH (%s)", name, os.Getenv("PATH"))
	// The path pdp was started by, links not followed: a versioned
	// install's link (Homebrew's bin/pdp) stays valid after an upgrade,
	// where its target would not.
	exe, err := os.Executable()
	exe = filepath.ToSlash(exe) // C:/… on Windows, as the hook command takes it
	if mayResolve && err == nil && strings.TrimSuffix(filepath.Base(exe), ".exe") == name && !strings.Contains(exe, "go-build") && !strings.ContainsAny(exe, " \t'\"=") {
		return exe, fmt.Sprintf("%s: the hook runs %s", notOnPath, exe)
	}
	return name, fmt.Sprintf("warning: %s: an agent started with it could not run the hook and would block every tool call. Install %s on the agent's PATH, or give --hook-binary /path/to/%s.", notOnPath, name, name)
}

func agentNames() string { return strings.Join(agents.Names(), ", ") }

// listAgents says, per agent, whether it is installed and which of its
// files have the PDP's hook.
func listAgents(cmd *cobra.Command, where hookconfig.Where) error {
	out := cmd.OutOrStdout()
	for _, described := range agents.All {
		a := hookconfig.For(described)
		installed := "not found on PATH"
		for _, bin := range a.Binaries {
			if path, err := exec.LookPath(bin); err == nil {
				installed = "installed (" + path + ")"
				break
			}
		}
		var configured []string
		places := []hookconfig.Where{{Home: where.Home, Getenv: where.Getenv}}
		if dir, err := os.Getwd(); err == nil {
			places = append(places, hookconfig.Where{Project: dir})
		}
		for _, w := range places {
			file, err := a.File(w)
			if err != nil {
				continue
			}
			ok, err := hookconfig.Configured(a, file)
			switch {
			case err != nil:
				configured = append(configured, fmt.Sprintf("%s (%v)", file, err))
			case ok:
				configured = append(configured, file)
			}
		}
		hooks := "the PDP's hook is not configured"
		if len(configured) > 0 {
			hooks = "the PDP's hook is in " + strings.Join(configured, ", ")
		}
		fmt.Fprintf(out, "%-12s %s; %s\n", a.Name, installed, hooks)
	}
	return nil
}
