//go:build !hookonly

package main

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/internal/config"
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
