//go:build !hookonly

package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/internal/app"
	"github.com/toolperm/pdp/internal/config"
)

func configCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check the configuration",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "check [FILE]",
		Short: "Check every key of a configuration file and the PDP_… environment",
		Long: `Reads FILE (default: --config, config.yaml) and the PDP_<KEY PATH>
environment variables as pdp serve does, and lists in one pass everything
serve would refuse: unknown keys, values of the wrong kind, and the values
serve checks before it starts (levels, modes, log settings, addresses,
trusted proxies, tokens, TLS files and plaintext off loopback, the policy
source and its verification key, the assessor's key variable, the
notification sinks and their secrets). Serve runs the same checks and
refuses with the same words. Each problem is named by its YAML path and its
environment variable, with the file's line:

  config.yaml:3: server.adress (PDP_SERVER_ADRESS): unknown key; server has addr, …

A PDP_ variable that looks like a setting but names none (PDP_SERVER_ADR) is
a warning, here and when serve starts. Exits 0 when serve would accept the
configuration, 1 otherwise. The policy itself is checked by pdp policy
check.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, _ := cmd.Flags().GetString("config")
			required := cmd.Flags().Changed("config")
			if len(args) == 1 {
				path, required = args[0], true
			}
			_, warnings, err := checkedConfig(path, required, os.Environ())
			for _, w := range warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			if ce, ok := errors.AsType[*config.Error](err); ok {
				for _, p := range ce.Problems {
					fmt.Fprintln(cmd.ErrOrStderr(), p)
				}
				return fmt.Errorf("%s: %d problem(s)", path, len(ce.Problems))
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", path)
			return nil
		},
	})
	return cmd
}

// checkedConfig loads the configuration at path (a missing file is the
// defaults unless required) and the PDP_ variables of environ, and checks
// it as serve does before it starts: every problem of the keys, or else
// of the values, in one *config.Error; and the warnings.
func checkedConfig(path string, required bool, environ []string) (config.Config, []string, error) {
	cfg, origin, warnings, err := config.LoadChecked(path, required, environ)
	if err != nil {
		return cfg, warnings, err
	}
	getenv := func(name string) string {
		for _, kv := range environ {
			if k, v, ok := strings.Cut(kv, "="); ok && k == name {
				return v
			}
		}
		return ""
	}
	return cfg, warnings, app.CheckError(origin, app.Check(cfg, getenv))
}
