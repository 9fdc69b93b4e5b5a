//go:build hookonly

package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/frontends/hooks/hookflow"
)

// binaryName is the command's name: the hook build is pdp-hook.
const binaryName = "pdp-hook"

// serverCommands are none: this build asks a server for every decision.
func serverCommands() []*cobra.Command { return nil }

// hookLocal cannot decide: deciding in-process needs OPA, which this
// build leaves out. The error is the call's deny.
func hookLocal(_ context.Context, _ *cobra.Command, a hookflow.Agent, _ hookflow.Call, _ string) (hookflow.Verdict, error) {
	return hookflow.Verdict{}, errors.New("--local decides in-process with the policy, which pdp-hook leaves out: " +
		"run `pdp hook " + a.Name + " --local` with the full pdp, or ask a server (--url)")
}
