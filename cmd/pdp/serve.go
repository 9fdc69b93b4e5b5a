//go:build !hookonly

package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/internal/app"
	"github.com/toolperm/pdp/internal/config"
)

func serveCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the decision point's HTTP API",
		Long: `Runs the HTTP API (POST /v1/decide, sessions, answers, grants, the audit
trail) on config.yaml's settings: 127.0.0.1:8181, the SQLite file pdp.db
(created on first start), the built-in policy. --db (db.path) may instead
be a postgres:// URL: replicas on one PostgreSQL database behave as one
decision point. Flags override the file;
PDP_<KEY PATH> environment variables override both file and defaults
(PDP_SERVER_ADDR, PDP_DB_PATH, PDP_POLICY_PATH, ...).

server.tls_cert_file and server.tls_key_file serve TLS 1.2+; SIGHUP (or a
change of the files) reloads the certificate. With auth.tokens on an
address other than loopback, serve refuses to start without TLS unless
server.allow_plaintext is true (a proxy in front terminates TLS).

SIGINT or SIGTERM stops it gracefully: decisions in flight finish and their
audit events are committed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadServeConfig(cmd)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serve(ctx, cfg, nil)
		},
	}
	cmd.Flags().String("addr", "", "listen address HOST:PORT (default: config's server.addr, 127.0.0.1:8181)")
	cmd.Flags().String("db", "", "SQLite file or postgres:// URL (default: config's db.path, pdp.db)")
	cmd.Flags().String("policies", "", "policy: a DIR, a BUNDLE (.tar.gz) or an http(s) URL of a bundle (default: config's policy.path, else the built-in policy)")
	return cmd
}

// serve runs the service until ctx ends. ready, when not nil, receives
// the listening address once the service answers requests.
func serve(ctx context.Context, cfg config.Config, ready chan<- string) error {
	s, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Run(ctx, ready)
}
