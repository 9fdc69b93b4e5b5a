package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/frontends/hooks/hookflow"
	"github.com/toolperm/pdp/internal/agents"
)

func hookCommand() *cobra.Command {
	hook := &cobra.Command{
		Use:   "hook",
		Short: "Agent-runtime hooks that ask the PDP before every tool call",
	}
	for _, a := range agents.All {
		hook.AddCommand(agentHookCommand(a))
	}
	return hook
}

type hookFlags struct {
	url, tokenEnv, workspaceDir string
	caFile                      string
	local                       bool
	timeout, wait               time.Duration
}

func agentHookCommand(a hookflow.Agent) *cobra.Command {
	var f hookFlags
	cmd := &cobra.Command{
		Use:   a.Name,
		Short: a.Short,
		Long:  ownName(a.Long),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r := answerHook(cmd, a, f)
			if _, err := cmd.OutOrStdout().Write(r.Stdout); err != nil {
				return err
			}
			fmt.Fprint(cmd.ErrOrStderr(), r.Stderr)
			if r.Exit != 0 {
				return exitStatus(r.Exit)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&f.url, "url", envOr("PDP_URL", "http://127.0.0.1:8181"), "the PDP's base URL (env PDP_URL)")
	cmd.Flags().StringVar(&f.tokenEnv, "token-env", "PDP_TOKEN", "environment variable holding the dispatcher token")
	caFileFlag(cmd, &f.caFile)
	cmd.Flags().BoolVar(&f.local, "local", false, "decide in-process with the configured policy instead of asking a server")
	cmd.Flags().String("policies", "", "with --local: policy directory, bundle or URL (default: config's policy.path)")
	// Well above the assessor's timeout (6s by default), so a SMART
	// verdict is not cut off by the hook.
	cmd.Flags().DurationVar(&f.timeout, "timeout", 20*time.Second, "give up (deny) after this long")
	cmd.Flags().DurationVar(&f.wait, "wait", 0, "hold an ask this long for a person's answer at the PDP (keep --timeout plus --wait under the agent's hook timeout)")
	project := "the project root calls must stay in"
	without := "; without one, --local denies file calls and a server keeps the session's first cwd"
	switch {
	case a.ProjectEnv != "":
		project += " (default $" + a.ProjectEnv + ")"
	case a.WorkspaceHelp != "":
		project += " (default " + a.WorkspaceHelp + ")"
		without = "; without either, calls are denied"
	}
	cmd.Flags().StringVar(&f.workspaceDir, "workspace", "", project+without)
	return cmd
}

// answerHook answers one event; it never fails: every error becomes the
// agent's deny.
func answerHook(cmd *cobra.Command, a hookflow.Agent, f hookFlags) hookflow.Reply {
	raw, err := hookflow.ReadEvent(cmd.InOrStdin())
	var c hookflow.Call
	if err == nil {
		c, err = a.Parse(raw)
	}
	if err != nil {
		return a.Reply(c, hookflow.Deny(err))
	}
	remote := hookflow.NewRemote(f.url, os.Getenv(f.tokenEnv), pdpTransport(f.caFile))
	o := hookflow.Options{PDP: remote, ConsoleURL: remote.ConsoleURL(), Timeout: f.timeout, Wait: f.wait, CanAsk: a.CanAsk(c), Workspace: f.workspaceDir, SendProject: true}
	if o.Workspace == "" && a.ProjectEnv != "" {
		o.Workspace = os.Getenv(a.ProjectEnv)
	}
	if f.local {
		o.PDP = nil
		o.Local = func(ctx context.Context, c hookflow.Call, workspace string) (hookflow.Verdict, error) {
			return hookLocal(ctx, cmd, a, c, workspace)
		}
	}
	if c.Kind == hookflow.Outcome {
		if err := hookflow.Record(cmd.Context(), o, c); err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), err)
		}
		return a.Reply(c, hookflow.Verdict{})
	}
	return a.Reply(c, hookflow.Decide(cmd.Context(), o, c))
}

// ownName is a help text with the commands it shows named as this
// build's binary (pdp-hook hook claude-code in the hook build).
func ownName(help string) string {
	if binaryName == "pdp" {
		return help
	}
	return strings.NewReplacer("pdp hook ", binaryName+" hook ", "pdp init ", binaryName+" init ", "pdp answer ", binaryName+" answer ").Replace(help)
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

// completeDecisions is the check of decide answers (hookflow) that the
// MCP proxy's client shares with the hooks.
type completeDecisions struct{ next http.RoundTripper }

// RoundTrip checks the answer of a decide request.
func (t completeDecisions) RoundTrip(req *http.Request) (*http.Response, error) {
	return hookflow.CompleteDecisions{Next: t.next}.RoundTrip(req)
}
