//go:build !hookonly

package main

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/policies"
)

// policyStarter holds what `pdp policy init` adds to the built-in
// policy: a data file each for policy rules, command rules and path
// rules, and a Rego test of each.
//
//go:embed policyinit
var policyStarter embed.FS

func policyInitCommand() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "init DIR",
		Short: "Write a policy folder to start from: the built-in policy, rule files and their tests",
		Long: `Writes a complete policy folder into DIR: the built-in policy (its .rego
files and data.json, as this binary serves it) and a data file each for the
rules a security team usually edits, with one Rego test each:

  rules/data.json       data.rules: capability patterns → allow, ask, deny
  commands/data.json    data.commands: command prefixes → allow, ask, deny
  paths/data.json       data.paths: path patterns → an action, or one per access
  */*_test.rego         a test of each (tests are never served)

The folder works as written: pdp policy test DIR passes, pdp policy check DIR
and pdp serve --policies DIR load it. DIR must be empty or missing; --force
writes into a non-empty DIR, replacing files of the same names.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := refuseNonEmpty(dir, force); err != nil {
				return err
			}
			written, err := writePolicyFolder(dir)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, f := range written {
				fmt.Fprintln(out, filepath.Join(dir, f))
			}
			fmt.Fprintf(out, "\nNext: edit the data files, then\n  pdp policy test %[1]s\n  pdp policy check %[1]s\n  pdp serve --policies %[1]s\n", dir)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "write into a non-empty DIR, replacing files of the same names")
	return cmd
}

// refuseNonEmpty says why dir may not be written into: it is not a
// directory, or it has entries and force is off.
func refuseNonEmpty(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return fmt.Errorf("policy folder %s: %w", dir, err)
	case len(entries) > 0 && !force:
		return fmt.Errorf("policy folder %s is not empty (%d entries): choose a new folder, or pass --force to write into it, replacing files of the same names", dir, len(entries))
	}
	return nil
}

// writePolicyFolder writes the built-in policy and the starter files into
// dir and returns the paths written, relative to dir.
func writePolicyFolder(dir string) ([]string, error) {
	starter, err := fs.Sub(policyStarter, "policyinit")
	if err != nil {
		return nil, err
	}
	var written []string
	for _, fsys := range []fs.FS{policies.FS, starter} {
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			target := filepath.Join(dir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(target, b, 0o644); err != nil {
				return err
			}
			written = append(written, p)
			return nil
		})
		if err != nil {
			return written, fmt.Errorf("writing the policy folder %s: %w", dir, err)
		}
	}
	sort.Strings(written)
	return written, nil
}
