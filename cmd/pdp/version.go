package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/internal/buildinfo"
)

// versionCommand prints which build this is; `pdp --version` prints the
// same line.
func versionCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and time, Go and OPA versions, and whether cgo was on",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := buildinfo.Read()
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), info)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the fields as JSON")
	return cmd
}

// withVersionFlag gives root a --version flag printing the line of `pdp version`.
func withVersionFlag(root *cobra.Command) {
	root.Version = buildinfo.Read().String()
	root.SetVersionTemplate("{{.Version}}\n")
}
