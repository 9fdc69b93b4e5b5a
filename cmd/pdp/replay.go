//go:build !hookonly

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/app"
	"github.com/toolperm/pdp/pdp"
)

func replayCommand() *cobra.Command {
	var candidate, since, session, format, failOn string
	cmd := &cobra.Command{
		Use:   "replay --policies CANDIDATE",
		Short: "Replay recorded decisions against a candidate policy and report what changes",
		Long: `Evaluates every recorded decision in range (default: all) again with the
candidate policy — a directory, a bundle .tar.gz or an http(s) bundle URL,
loaded and checked as serve does — and reports how many were replayed,
skipped (not replayable: recorded before the trail kept inputs, or over
the size cap) and changed; the changes grouped by from → to and the
candidate's rule with example decision ids; and every change that loosens
(deny or ask → allow, deny → ask). The LLM is not called: the recorded
danger verdict is reused, and a call that now needs one it never had is
judged DANGEROUS. SESSIONS counts the sessions a group's decisions were
made in.

The trail is replayed oldest first, and each session tree's flow labels
(docs/design.md §4, "Flow") are the candidate's: a call adds the labels
the candidate gives it when the candidate allows it, or asks and the call
ran then. So a candidate flow rule, or a candidate that labels calls the
active policy did not, shows which sessions it would have stopped. A tree
whose first decision in range is not its first starts with the labels
that decision had.

Safe while a server runs on the same database. Exit status 0, or 3 when
--fail-on matches (for CI of a policy repository).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if candidate == "" {
				return fmt.Errorf("--policies names the candidate policy (a directory, a bundle or a URL)")
			}
			if format != "text" && format != "json" {
				return fmt.Errorf("--format is text or json, not %q", format)
			}
			if failOn != "" && failOn != "loosen" && failOn != "change" {
				return fmt.Errorf("--fail-on is loosen or change, not %q", failOn)
			}
			filter := pdp.ReplayFilter{SessionID: session}
			if since != "" {
				t, err := parseCut(since, time.Now())
				if err != nil {
					return fmt.Errorf("--since %w", err)
				}
				filter.Since = t
			}
			return withTrailAndPolicy(cmd, func(ctx context.Context, policy *pdp.Policy, store app.Store) error {
				start := time.Now()
				report, err := pdp.Impact(ctx, policy, store, filter, func(n int) {
					fmt.Fprintf(cmd.ErrOrStderr(), "replayed %d decisions…\n", n)
				})
				if err != nil {
					return err
				}
				took := time.Since(start)
				if format == "json" {
					enc := json.NewEncoder(cmd.OutOrStdout())
					enc.SetIndent("", "  ")
					if err := enc.Encode(report); err != nil {
						return err
					}
				} else {
					printImpact(cmd.OutOrStdout(), report, policy.Revision, took)
				}
				if (failOn == "loosen" && report.Loosened > 0) || (failOn == "change" && report.Changed > 0) {
					return exitStatus(3)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&candidate, "policies", "", "the candidate policy: a directory, a bundle .tar.gz or an http(s) bundle URL")
	cmd.Flags().String("db", "", "the database the server records to, a SQLite file or a postgres:// URL (default: config's db.path, pdp.db)")
	cmd.Flags().StringVar(&since, "since", "", "only decisions since this time: a duration back from now (24h, 168h) or an RFC 3339 time")
	cmd.Flags().StringVar(&session, "session", "", "only the decisions of this session")
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	cmd.Flags().StringVar(&failOn, "fail-on", "", "exit 3 when any change loosens (loosen) or when anything changes (change)")
	return cmd
}

// printImpact writes the report for a person.
func printImpact(w io.Writer, r api.ImpactReport, revision string, took time.Duration) {
	rate := 0.0
	if took > 0 {
		rate = float64(r.Replayed+r.Skipped) / took.Seconds()
	}
	fmt.Fprintf(w, "candidate %s: %d replayed, %d skipped (not replayable), %d changed, %d loosened (%.0f decisions/s)\n",
		revision, r.Replayed, r.Skipped, r.Changed, r.Loosened, rate)
	if len(r.Changes) == 0 {
		fmt.Fprintln(w, "no decision changes")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nFROM → TO\tRULE\tCOUNT\tSESSIONS\tEXAMPLES")
	for _, c := range r.Changes {
		fmt.Fprintf(tw, "%s → %s\t%s\t%d\t%d\t%s\n", c.From, c.To, c.Rule, c.Count, c.Sessions, strings.Join(c.Examples, " "))
	}
	tw.Flush()
	if len(r.Loosening) > 0 {
		fmt.Fprintln(w, "\nLOOSENED (the candidate lets more through):")
		for _, c := range r.Loosening {
			fmt.Fprintf(w, "  %s → %s by %s: %d (e.g. %s)\n", c.From, c.To, c.Rule, c.Count, strings.Join(c.Examples, " "))
		}
	}
}
