// Command pdp is the toolperm policy decision point: `pdp serve` runs the
// service, `pdp decide` answers one call in-process.
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
		Use:           "pdp",
		Short:         "toolperm: a policy decision point for AI-agent tool calls",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().String("config", "config.yaml", "configuration file (a missing default file means built-in defaults)")
	root.AddCommand(serveCommand(), decideCommand(), hookCommand(), initCommand())
	root.AddCommand(mcpProxyCommand())
	root.AddCommand(replayCommand(), suggestCommand())
	root.AddCommand(asksCommand(), answerCommand(), levelCommand())
	root.AddCommand(auditCommand())
	root.AddCommand(policyCommand(), configCommand())
	root.AddCommand(versionCommand())
	withVersionFlag(root)
	return root
}
