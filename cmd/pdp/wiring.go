package main

import (
	"context"
	"fmt"
	"os"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/keys"
	"github.com/toolperm/pdp/adapters/assessor"
	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/adapters/shell"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/policies"
)

// loadConfig reads --config (required only when given explicitly) and the
// PDP_* environment; the flags that name a setting (--addr, --db,
// --policies), where the command has them and they are given, override
// both.
func loadConfig(cmd *cobra.Command) (config.Config, error) {
	path, _ := cmd.Flags().GetString("config")
	cfg, err := config.Load(path, cmd.Flags().Changed("config"), os.Environ())
	if err != nil {
		return cfg, err
	}
	for name, setting := range map[string]*string{"addr": &cfg.Server.Addr, "db": &cfg.DB.Path, "policies": &cfg.Policy.Path} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			*setting = f.Value.String()
		}
	}
	return cfg, nil
}

// localEngine is an engine in this process on the configured policy,
// assessor and workspace, with no audit trail (pdp decide, the hook's
// --local).
func localEngine(ctx context.Context, cfg config.Config) (*pdp.Engine, error) {
	policy, err := loadPolicy(ctx, cfg.Policy)
	if err != nil {
		return nil, err
	}
	assess, err := newAssessor(cfg.Assessor, nil)
	if err != nil {
		return nil, err
	}
	return pdp.New(policy, pdp.Components{Assessor: assess, Shell: shell.Parser{}, Workspace: workspaceResolver(cfg.Paths)}), nil
}

// policySource is the configured policy source, with the built-in policy
// and the verification keys.
func policySource(cfg config.Policy) (policysource.Config, error) {
	src := policysource.Config{Path: cfg.Path, Builtin: policies.FS, MaxBytes: cfg.MaxBundleBytes}
	if v := cfg.Verification; v.KeyFile != "" {
		key, err := keys.NewKeyConfig(v.KeyFile, v.Algorithm, v.Scope)
		if err != nil {
			return src, fmt.Errorf("policy.verification: %w", err)
		}
		src.Verification = bundle.NewVerificationConfig(map[string]*keys.Config{v.KeyID: key}, v.KeyID, v.Scope, nil)
	}
	return src, src.Validate()
}

// loadPolicy compiles and tests the configured policy once.
func loadPolicy(ctx context.Context, cfg config.Policy) (*pdp.Policy, error) {
	src, err := policySource(cfg)
	if err != nil {
		return nil, err
	}
	p, err := policysource.Load(ctx, src)
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

// workspaceResolver is the path resolver the configuration describes.
func workspaceResolver(c config.Paths) paths.Resolver {
	return paths.Resolver{FollowSymlinks: c.FollowSymlinks, MaxElements: c.MaxElements, MaxLookups: c.MaxLookups, CaseInsensitive: c.CaseInsensitive}
}
