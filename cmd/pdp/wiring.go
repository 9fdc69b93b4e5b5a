package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/policies"
)

// loadConfig reads --config (required only when given explicitly) and the
// PDP_* environment.
func loadConfig(cmd *cobra.Command) (config.Config, error) {
	path, _ := cmd.Flags().GetString("config")
	return config.Load(path, cmd.Flags().Changed("config"), os.Environ())
}

// loadPolicy compiles the configured policy: a directory, or the built-in
// one when the path is empty.
func loadPolicy(ctx context.Context, path string) (*pdp.Policy, error) {
	if path == "" {
		return pdp.LoadFS(ctx, policies.FS, "builtin")
	}
	p, err := pdp.LoadDir(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return p, nil
}
