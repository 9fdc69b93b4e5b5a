// Command pdp is the toolperm policy decision point: `pdp serve` runs the
// service, `pdp decide` answers one call in-process.
//
// Built with -tags hookonly (and CGO_ENABLED=0) it is pdp-hook, the
// laptop's binary: the agents' hooks, pdp init and the terminal commands
// (asks, answer, level), asking a PDP server, without the server's parts
// (OPA, the stores) and their start-up cost. server.go and hookonly.go
// hold what differs.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := rootCommand().Execute(); err != nil {
		var status exitStatus
		if errors.As(err, &status) {
			os.Exit(int(status))
		}
		fmt.Fprintln(os.Stderr, "pdp:", err)
		os.Exit(1)
	}
}

func rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           binaryName,
		Short:         "toolperm: a policy decision point for AI-agent tool calls",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().String("config", "config.yaml", "configuration file (a missing default file means built-in defaults)")
	root.AddCommand(hookCommand(), initCommand())
	root.AddCommand(asksCommand(), answerCommand(), levelCommand(), loginCommand(), logoutCommand())
	root.AddCommand(versionCommand())
	// The server's commands; the hook build (pdp-hook) leaves them out.
	root.AddCommand(serverCommands()...)
	withVersionFlag(root)
	return root
}

// exitStatus ends the command with a status and no further message: the
// command has printed what it found.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
