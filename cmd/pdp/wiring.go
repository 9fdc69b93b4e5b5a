package main

import (
	"context"
	"fmt"
	"os"

	"github.com/toolperm/pdp/adapters/assessor"

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

// newAssessor builds the danger assessor from config; nil (every assess
// asks) when no URL is configured.
func newAssessor(cfg config.Assessor, observer assessor.Observer) (pdp.Assessor, error) {
	if cfg.URL == "" {
		return nil, nil
	}
	key := ""
	if cfg.APIKeyEnv != "" {
		key = os.Getenv(cfg.APIKeyEnv)
		if key == "" {
			return nil, fmt.Errorf("assessor: environment variable %s (assessor.api_key_env) is empty", cfg.APIKeyEnv)
		}
	}
	a, err := assessor.New(assessor.Config{
		URL: cfg.URL, Model: cfg.Model, APIKey: key, Timeout: cfg.Timeout, MaxTokens: cfg.MaxTokens,
		CacheSize: cfg.CacheSize, CacheTTL: cfg.CacheTTL, MaxCommandBytes: cfg.MaxCommandBytes,
		BreakerFailures: cfg.BreakerFailures, BreakerCooldown: cfg.BreakerCooldown, Observer: observer,
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}
