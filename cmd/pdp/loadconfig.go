//go:build !hookonly

package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/internal/app"
	"github.com/toolperm/pdp/internal/config"
)

// loadConfig reads --config (required only when given explicitly) and the
// PDP_* environment; the flags that name a setting (--addr, --db,
// --policies), where the command has them and they are given, override
// both. A PDP_ variable that names no setting is a warning on stderr.
func loadConfig(cmd *cobra.Command) (config.Config, error) {
	cfg, _, err := loadConfigOrigin(cmd)
	return cfg, err
}

// loadServeConfig is loadConfig and every check serve makes of the
// values before it starts (app.Check), each problem named by where
// it was set, in the words of pdp config check.
func loadServeConfig(cmd *cobra.Command) (config.Config, error) {
	cfg, origin, err := loadConfigOrigin(cmd)
	if err != nil {
		return cfg, err
	}
	return cfg, app.CheckError(origin, app.Check(cfg, os.Getenv))
}

func loadConfigOrigin(cmd *cobra.Command) (config.Config, config.Origin, error) {
	path, _ := cmd.Flags().GetString("config")
	cfg, origin, warnings, err := config.LoadChecked(path, cmd.Flags().Changed("config"), os.Environ())
	for _, w := range warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "pdp: warning:", w)
	}
	if err != nil {
		return cfg, origin, err
	}
	for name, setting := range map[string]*string{"addr": &cfg.Server.Addr, "db": &cfg.DB.Path, "policies": &cfg.Policy.Path} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			*setting = f.Value.String()
		}
	}
	return cfg, origin, nil
}
