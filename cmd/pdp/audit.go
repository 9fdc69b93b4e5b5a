//go:build !hookonly

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/adapters/decisionlog"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/app"
	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/postgres"
	"github.com/toolperm/pdp/store/sqlite"
)

func auditCommand() *cobra.Command {
	audit := &cobra.Command{
		Use:   "audit",
		Short: "Inspect, prune and export the audit trail in the database",
		Long: `Works on the database file pdp serve uses (--db, else config's db.path),
also while the server runs: the file is in WAL mode, reads never block
decisions, and prune deletes in short transactions between theirs.`,
	}
	audit.PersistentFlags().String("db", "", "SQLite file or postgres:// URL (default: config's db.path, pdp.db)")
	audit.AddCommand(auditStatsCommand(), auditPruneCommand(), auditExportCommand(), auditVacuumCommand())
	return audit
}

// openTrail opens the configured database, which must exist: a mistyped
// path is an error, not a new empty trail.
func openTrail(cmd *cobra.Command) (app.Store, config.Config, error) {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return nil, cfg, err
	}
	if !postgres.IsURL(cfg.DB.Path) {
		if _, err := os.Stat(cfg.DB.Path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, cfg, fmt.Errorf("no database at %s (--db or db.path)", cfg.DB.Path)
			}
			return nil, cfg, err
		}
	}
	store, err := app.OpenDatabase(cmd.Context(), cfg.DB, nil, nil)
	return store, cfg, err
}

// withTrailAndPolicy opens the configured database (openTrail) and loads
// the configured policy (replay's candidate, the policy suggestions are
// judged by), gives both to use and closes the database.
func withTrailAndPolicy(cmd *cobra.Command, use func(context.Context, *pdp.Policy, app.Store) error) error {
	return withTrail(cmd, func(store app.Store, cfg config.Config) error {
		policy, err := app.LoadPolicy(cmd.Context(), cfg.Policy)
		if err != nil {
			return err
		}
		return use(cmd.Context(), policy, store)
	})
}

// withTrail opens the configured database (openTrail), gives it to use
// and closes it.
func withTrail(cmd *cobra.Command, use func(app.Store, config.Config) error) error {
	store, cfg, err := openTrail(cmd)
	if err != nil {
		return err
	}
	defer store.Close()
	return use(store, cfg)
}

// withSQLiteFile is withTrail for the commands that work on the SQLite
// file itself (stats, vacuum).
func withSQLiteFile(cmd *cobra.Command, use func(*sqlite.Store, config.Config) error) error {
	return withTrail(cmd, func(store app.Store, cfg config.Config) error {
		file, ok := store.(*sqlite.Store)
		if !ok {
			return fmt.Errorf("pdp audit %s works on a SQLite file; on PostgreSQL use its own tools (SELECT count(*) FROM decisions; autovacuum reuses the space of deleted events)", cmd.Name())
		}
		return use(file, cfg)
	})
}

// parseCut reads a point in time: an RFC 3339 time, or a duration meaning
// that long before now.
func parseCut(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q: a duration back from now must not be negative", s)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want a duration (720h) or an RFC 3339 time (2026-11-01T00:00:00Z)", s)
	}
	return t, nil
}

func auditStatsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "stats",
		Short: "Count the audit trail: events, bytes, oldest, newest, per decision and source",
		Long: `Counts every event (it reads one index of the trail: seconds for ten
million events) and prints the file's size, the oldest and newest event,
and the events per decision and per source.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withSQLiteFile(cmd, func(file *sqlite.Store, cfg config.Config) error {
				st, err := file.TrailStats(cmd.Context())
				if err != nil {
					return err
				}
				return printTrailStats(cmd.OutOrStdout(), cfg.DB.Path, st)
			})
		},
	}
}

func printTrailStats(out io.Writer, path string, st sqlite.TrailStats) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	reclaim := "given back to the file system by the sweeper"
	if !st.Incremental {
		reclaim = "reused for new events, not given back (pdp audit vacuum switches)"
	}
	fmt.Fprintf(w, "database\t%s\n", path)
	fmt.Fprintf(w, "bytes\t%d (%s), %d free; freed space is %s\n", st.Bytes, humanBytes(st.Bytes), st.FreeBytes, reclaim)
	fmt.Fprintf(w, "events\t%d\n", st.Events)
	if st.Events > 0 {
		fmt.Fprintf(w, "oldest\t%s\n", st.Oldest.UTC().Format(time.RFC3339))
		fmt.Fprintf(w, "newest\t%s\n", st.Newest.UTC().Format(time.RFC3339))
	}
	byDecision, bySource := map[string]int64{}, map[string]int64{}
	for _, c := range st.Counts {
		byDecision[c.Decision] += c.Events
		bySource[c.Source] += c.Events
	}
	for _, group := range []struct {
		name   string
		counts map[string]int64
	}{{"decision", byDecision}, {"source", bySource}} {
		fmt.Fprintf(w, "\nper %s\tevents\n", group.name)
		keys := make([]string, 0, len(group.counts))
		for k := range group.counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "%s\t%d\n", k, group.counts[k])
		}
	}
	fmt.Fprintf(w, "\ndecision\tsource\tevents\n")
	for _, c := range st.Counts {
		fmt.Fprintf(w, "%s\t%s\t%d\n", c.Decision, c.Source, c.Events)
	}
	return w.Flush()
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func auditPruneCommand() *cobra.Command {
	var before string
	cmd := &cobra.Command{
		Use:   "prune --before DURATION|RFC3339",
		Short: "Delete the events older than a point in time, as the sweeper does",
		Long: `Deletes every event older than --before (a duration back from now, 720h,
or an RFC 3339 time) in short transactions, then gives the space back,
as the server's sweeper does every audit.sweep_interval for
audit.retention. Progress goes to standard error. Safe while the server
runs: its decisions take turns with the batches.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if before == "" {
				return errors.New("--before is required (a duration such as 720h, or an RFC 3339 time)")
			}
			cut, err := parseCut(before, time.Now())
			if err != nil {
				return fmt.Errorf("--before %w", err)
			}
			return withTrail(cmd, func(store app.Store, _ config.Config) error {
				return prune(cmd.Context(), store, cut, cmd.ErrOrStderr())
			})
		},
	}
	cmd.Flags().StringVar(&before, "before", "", "delete events older than this: a duration back from now (720h) or an RFC 3339 time")
	return cmd
}

// prune runs the sweeper's work once, reporting progress at most every
// second on progress.
func prune(ctx context.Context, store pdp.TrailPruner, cut time.Time, progress io.Writer) error {
	start := time.Now()
	last := start
	fmt.Fprintf(progress, "deleting events before %s\n", cut.UTC().Format(time.RFC3339))
	sw := &pdp.Sweeper{Store: store}
	n, err := sw.Prune(ctx, cut, func(deleted int) {
		if now := time.Now(); now.Sub(last) >= time.Second {
			last = now
			fmt.Fprintf(progress, "deleted %d events (%.0f/s)\n", deleted, float64(deleted)/now.Sub(start).Seconds())
		}
	})
	took := time.Since(start)
	if err != nil {
		return fmt.Errorf("after deleting %d events: %w", n, err)
	}
	size, err := store.TrailSize(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "deleted %d events in %s; the file is %s\n", n, took.Round(time.Millisecond), humanBytes(size.Bytes))
	return nil
}

func auditExportCommand() *cobra.Command {
	var since, format, output string
	cmd := &cobra.Command{
		Use:   "export [--since DURATION|RFC3339] [--format jsonl] [--output FILE]",
		Short: "Write the trail's events as OPA decision-log lines",
		Long: `Writes every event at or after --since (a duration back from now, or an
RFC 3339 time; default: all), oldest first, as the JSON lines of the
decision log export (decision_log.*: the same format, masked keys and
replica id). input.capability is left out: the trail keeps the
capability the decision found, which is in result.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "jsonl" {
				return fmt.Errorf("--format %q: only jsonl (OPA decision-log lines) is supported", format)
			}
			var cut time.Time
			if since != "" {
				var err error
				if cut, err = parseCut(since, time.Now()); err != nil {
					return fmt.Errorf("--since %w", err)
				}
			}
			return withTrail(cmd, func(store app.Store, cfg config.Config) error {
				out := cmd.OutOrStdout()
				if output != "" && output != "-" {
					f, err := os.OpenFile(output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
					if err != nil {
						return err
					}
					defer f.Close()
					out = f
				}
				n, err := export(cmd.Context(), store, cut, out, cfg.DecisionLog)
				fmt.Fprintf(cmd.ErrOrStderr(), "exported %d events\n", n)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only events at or after this: a duration back from now (24h) or an RFC 3339 time")
	cmd.Flags().StringVar(&format, "format", "jsonl", "output format: jsonl (OPA decision-log lines)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "file to write (default: standard output)")
	return cmd
}

// export writes the events at or after since to out as decision-log lines.
func export(ctx context.Context, store app.Store, since time.Time, out io.Writer, cfg config.DecisionLog) (int, error) {
	w := decisionlog.New(out, decisionlog.Options{Mask: cfg.Mask, ReplicaID: cfg.ReplicaID})
	n := 0
	err := store.EachDecision(ctx, since, func(rec api.Event) error {
		n++
		return w.Record(ctx, eventOf(rec))
	})
	return n, errors.Join(err, w.Close())
}

// eventOf is the decision as the engine recorded it, from its stored form.
func eventOf(rec api.Event) pdp.AuditRecord {
	return pdp.AuditRecord{
		Decision:  rec.Decision,
		Request:   api.DecideRequest{SessionID: rec.SessionID, Tool: rec.Tool, Args: rec.Args, Cwd: rec.Cwd},
		SessionID: rec.SessionID,
		Time:      rec.Time,
		Latency:   time.Duration(rec.LatencyUS) * time.Microsecond,
	}
}

func auditVacuumCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "vacuum",
		Short: "Switch a large database to giving freed space back (run with the server stopped)",
		Long: strings.TrimSpace(`
Rewrites the database file (VACUUM) with incremental auto-vacuum, so the
sweeper gives the space of deleted events back to the file system. New
databases, and those up to 64 MiB at start, are switched by pdp serve by
itself; a larger one keeps reusing freed space until this is run once.
It needs as much free disk as the file, takes time in proportion to it,
and holds the write lock throughout: stop the server first.`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withSQLiteFile(cmd, func(file *sqlite.Store, cfg config.Config) error {
				start := time.Now()
				if err := file.Vacuum(cmd.Context()); err != nil {
					return err
				}
				size, err := file.TrailSize(cmd.Context())
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: incremental auto-vacuum, %s, in %s\n", cfg.DB.Path, humanBytes(size.Bytes), time.Since(start).Round(time.Millisecond))
				return nil
			})
		},
	}
}
