//go:build !hookonly

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/app"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/pdp/suggest"
)

func suggestCommand() *cobra.Command {
	var since, session, format string
	var minAnswers int
	cmd := &cobra.Command{
		Use:   "suggest",
		Short: "Suggest command rules from the asks people already answered, with what each would change",
		Long: `Reads the answered asks of the audit trail in the window (default: the
last 14 days) and suggests the command rules people are in effect already
applying: a shell command the level table asked for, allowed by a person
at least --min-answers times in at least 2 sessions, never denied or left
to expire, becomes a command prefix rule — the longest literal prefix all
those answers share. Each suggestion comes with its evidence and its
impact: the trail replayed with the rule added under the active policy
(asks that become allow; any other change drops the suggestion). Programs
no grant may name (interpreters, shells, wrappers, sudo, env, rm, …) and
asks of a rule, the deny floor or the SMART screen are never suggested
(docs/policy.md). With --session, only the trail of that session's
project is read (the sessions a project grant reaches), and the
suggestions are the project's.

Safe while a server runs on the same database.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("--format is text or json, not %q", format)
			}
			if minAnswers < 1 {
				return fmt.Errorf("--min-answers must be at least 1, got %d", minAnswers)
			}
			opts := suggest.Options{MinAnswers: minAnswers}
			t, err := sinceFlag(since, time.Now())
			if err != nil {
				return fmt.Errorf("--since %w", err)
			}
			opts.Since = t
			return withTrailAndPolicy(cmd, func(ctx context.Context, policy *pdp.Policy, store app.Store) error {
				if session != "" {
					if opts.Sessions, err = suggest.ProjectSessions(ctx, store, session); err != nil {
						return fmt.Errorf("--session %s: %w", session, err)
					}
				}
				out, err := suggest.Suggest(ctx, policy, store, opts)
				if err != nil {
					return err
				}
				if format == "json" {
					enc := json.NewEncoder(cmd.OutOrStdout())
					enc.SetIndent("", "  ")
					return enc.Encode(out)
				}
				printSuggestions(cmd.OutOrStdout(), out)
				return nil
			})
		},
	}
	cmd.Flags().String("db", "", "the database the server records to, a SQLite file or a postgres:// URL (default: config's db.path, pdp.db)")
	cmd.Flags().StringVar(&since, "since", "14d", "the window: a duration back from now (14d, 72h) or an RFC 3339 time")
	cmd.Flags().IntVar(&minAnswers, "min-answers", suggest.DefaultMinAnswers, "the fewest allows a suggestion needs")
	cmd.Flags().StringVar(&session, "session", "", "only the decisions of this session's project (its root's owner's sessions in its workspace)")
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	return cmd
}

// sinceFlag reads a window's start: a number of days ("14d"), a Go
// duration back from now, or an RFC 3339 time.
func sinceFlag(s string, now time.Time) (time.Time, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return time.Time{}, fmt.Errorf("%q: days are a whole number not below 0 (14d)", s)
		}
		return now.AddDate(0, 0, -n), nil
	}
	return parseCut(s, now)
}

// printSuggestions writes the suggestions for a person.
func printSuggestions(w io.Writer, out api.Suggestions) {
	fmt.Fprintf(w, "%d suggestions from %d asks (%d decisions replayed)\n", len(out.Suggestions), out.Asks, out.Replayed)
	if len(out.Suggestions) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "\nRULE\tACTION\tALLOWS\tSESSIONS\tASKS → ALLOW\tEXAMPLES")
		for _, s := range out.Suggestions {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", s.Pattern, s.Action, s.Evidence.Allows, s.Evidence.Sessions,
				s.Impact.AsksToAllow, strings.Join(s.Impact.Examples, " "))
		}
		tw.Flush()
		data := map[string]map[string]string{"commands": {}}
		for _, s := range out.Suggestions {
			data["commands"][s.Pattern] = s.Action
		}
		b, _ := json.MarshalIndent(data, "", "  ")
		fmt.Fprintf(w, "\nAs policy data (merge into the bundle's data.json):\n%s\n", b)
	}
	if len(out.Dropped) > 0 {
		fmt.Fprintln(w, "\nNOT SUGGESTED:")
		for _, d := range out.Dropped {
			fmt.Fprintf(w, "  %s: %s %s\n", d.Pattern, d.Reason, strings.Join(d.Examples, " "))
		}
	}
}
