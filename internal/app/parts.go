package app

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

	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/policies"
)

// LocalEngine is an engine in this process on the configured policy,
// assessor and workspace, with no audit trail (pdp decide, the hook's
// --local, the load generator's input documents). policy, when not nil,
// replaces the configured one.
func LocalEngine(ctx context.Context, cfg config.Config, policy *pdp.Policy) (*pdp.Engine, error) {
	if policy == nil {
		var err error
		if policy, err = LoadPolicy(ctx, cfg.Policy); err != nil {
			return nil, err
		}
	}
	assess, err := NewAssessor(cfg.Assessor, nil)
	if err != nil {
		return nil, err
	}
	return pdp.New(policy, components(cfg, assess)), nil
}

// components are the engine's adapters the configuration describes: the
// shell parser, the path resolver, the assessor.
func components(cfg config.Config, assess pdp.Assessor) pdp.Components {
	return pdp.Components{Assessor: assess, Shell: shell.Parser{}, Workspace: workspaceResolver(cfg.Paths),
		Projects: &paths.ProjectFiles{}, ProjectSource: pdp.ProjectSource(cfg.Paths.ProjectPolicy),
		EvalTimeout: cfg.Policy.EvalTimeout, MemoBytes: cfg.Policy.MemoBytes, SubmemoBytes: cfg.Policy.SubmemoBytes}
}

// PolicySource is the configured policy source, with the built-in policy
// and the verification keys.
func PolicySource(cfg config.Policy) (policysource.Config, error) {
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

// LoadPolicy compiles and tests the configured policy once.
func LoadPolicy(ctx context.Context, cfg config.Policy) (*pdp.Policy, error) {
	src, err := PolicySource(cfg)
	if err != nil {
		return nil, err
	}
	p, err := policysource.Load(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return p, nil
}

// NewAssessor builds the danger assessor from config; nil (every assess
// asks) when no URL is configured.
func NewAssessor(cfg config.Assessor, observer assessor.Observer) (pdp.Assessor, error) {
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
