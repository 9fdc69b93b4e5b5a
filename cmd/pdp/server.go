//go:build !hookonly

package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/frontends/hooks/hookflow"
	"github.com/toolperm/pdp/internal/app"
	"github.com/toolperm/pdp/pdp"
)

// binaryName is the command's name: the full build is pdp.
const binaryName = "pdp"

// serverCommands are the commands that need the server's parts (OPA, the
// stores): the hook build leaves them out.
func serverCommands() []*cobra.Command {
	return []*cobra.Command{
		serveCommand(), decideCommand(), mcpProxyCommand(),
		replayCommand(), suggestCommand(), auditCommand(),
		policyCommand(), configCommand(),
	}
}

func hookLocal(ctx context.Context, cmd *cobra.Command, a hookflow.Agent, c hookflow.Call, workspace string) (hookflow.Verdict, error) {
	if workspace == "" {
		if !c.FileFree {
			hint := ""
			if a.ProjectEnv != "" {
				hint = " or set " + a.ProjectEnv
			}
			return hookflow.Verdict{Decision: client.Deny, Reason: fmt.Sprintf("toolperm: no workspace is set, so %s (a tool that may touch files) is denied: "+
				"pass --workspace <project dir> to `pdp hook %s --local`%s "+
				"(the event's cwd %q is not a workspace: it follows the model's cd)", c.Tool, a.Name, hint, c.Cwd)}, nil
		}
		workspace = c.Cwd // nothing to confine
	}
	cfg, err := loadConfig(cmd)
	if err != nil {
		return hookflow.Verdict{}, err
	}
	engine, err := app.LocalEngine(ctx, cfg, nil)
	if err != nil {
		return hookflow.Verdict{}, err
	}
	session := &pdp.SessionTree{
		ID:              c.Session,
		PermissionLevel: api.Level(a.LevelOf(c.PermissionMode, cfg.Sessions.PermissionLevel)),
		Mode:            api.Mode(cfg.Sessions.Mode),
		Workspace:       workspace,
	}
	if c.Child != "" {
		session = pdp.ChildSession(session, c.Child)
	}
	r := c.Request()
	// No store: the session lives as long as this call (the desk decides
	// in it as a server decides in a stored one).
	desk := pdp.NewDesk(engine, nil, pdp.DeskOptions{})
	d, err := desk.DecideIn(ctx, api.DecideRequest{SessionID: session.ID, Tool: r.Tool, Args: r.Args, Cwd: r.Cwd, Runtime: r.Runtime}, session)
	if err != nil {
		return hookflow.Verdict{}, err
	}
	return hookflow.Verdict{Decision: d.Decision, Reason: fmt.Sprintf("toolperm: %s (rule %s, decision %s)", d.Reason, d.Rule, d.DecisionID), DecisionID: d.DecisionID}, nil
}
