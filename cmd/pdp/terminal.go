package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/client"
)

// terminalChannel is what the person's terminal commands share: where
// the PDP is and the token to show it.
type terminalChannel struct{ url, token, caFile string }

func (t *terminalChannel) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&t.url, "url", envOr("PDP_URL", "http://127.0.0.1:8181"), "the PDP's base URL (env PDP_URL)")
	cmd.Flags().StringVar(&t.token, "token", "", "a user token (default: $PDP_TOKEN)")
	caFileFlag(cmd, &t.caFile)
}

// client is the PDP's client with the token of --token, else PDP_TOKEN,
// else the sign-in pdp login kept for this PDP.
func (t *terminalChannel) client(ctx context.Context, errOut io.Writer) *client.Client {
	token := t.token
	if token == "" {
		token = os.Getenv("PDP_TOKEN")
	}
	if token == "" {
		token = signedInToken(ctx, t.url, errOut)
	}
	return client.New(t.url, client.WithToken(token), client.WithCAFile(t.caFile))
}

// failed says what went wrong in words a person at the terminal can act
// on: the API's own message, or that the PDP could not be reached.
func (t *terminalChannel) failed(action string, err error) error {
	var api *client.Error
	if !errors.As(err, &api) {
		return fmt.Errorf("%s: cannot reach the PDP at %s: %s", action, t.url, strings.TrimPrefix(err.Error(), "pdp: "))
	}
	msg := fmt.Sprintf("%s: the PDP answered %d %s: %s", action, api.Status, api.Code, api.Message)
	switch api.Status {
	case 401:
		msg += " (set PDP_TOKEN or --token to a token with the user role, or sign in with pdp login)"
	case 403:
		msg += " (this needs a token with the user role)"
	}
	return errors.New(msg)
}

// channelName is the channel answers from the terminal are recorded with.
const channelName = "terminal"

// terminalAnswers are the answers the server takes.
var terminalAnswers = []string{client.AllowOnce, client.AllowSession, client.AllowProject, client.DenyAnswer}

func answerCommand() *cobra.Command {
	var t terminalChannel
	cmd := &cobra.Command{
		Use:   "answer ID " + strings.Join(terminalAnswers, "|"),
		Short: "Answer an ask (see pdp asks)",
		Long: `Answers the ask with decision id ID, recorded with channel "terminal":
allow_once lets that one call run, allow_session also grants its
fingerprint (each part's, for a compound command) to the session
(shell commands only), allow_project grants them to every session with
the session's workspace, deny refuses it. A
runtime parked on the ask gets the answer at once.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, answer := args[0], args[1]
			if !slices.Contains(terminalAnswers, answer) {
				return fmt.Errorf("answer %q: want one of %s", answer, strings.Join(terminalAnswers, ", "))
			}
			ev, err := t.client(cmd.Context(), cmd.ErrOrStderr()).Answer(cmd.Context(), id, answer, channelName)
			if err != nil {
				return t.failed("answer "+id, err)
			}
			out := fmt.Sprintf("%s: %s (%s %s)", ev.DecisionID, answer, printable(deref(ev.Capability, ev.Tool)), printable(callSummary(ev.Args)))
			if ev.Answer != nil && ev.Answer.GrantID != 0 {
				out += fmt.Sprintf(", grant %d for %q", ev.Answer.GrantID, printable(deref(ev.Fingerprint, "")))
			}
			if ev.Answer != nil && ev.Answer.AnsweredBy != "" {
				out += ", answered by " + printable(ev.Answer.AnsweredBy)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), out)
			return err
		},
	}
	t.flags(cmd)
	return cmd
}

func levelCommand() *cobra.Command {
	var t terminalChannel
	cmd := &cobra.Command{
		Use:   "level SESSION READ_ONLY|READ_WRITE|SMART|FULL",
		Short: "Switch a session's permission level",
		Long:  "Sets the permission level of SESSION; it applies to the session's next decision. The level may be written in any case (full is FULL).",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			level := client.Level(strings.ToUpper(args[1]))
			s, err := t.client(cmd.Context(), cmd.ErrOrStderr()).Sessions().Update(cmd.Context(), args[0], client.SessionChange{PermissionLevel: &level})
			if err != nil {
				return t.failed("level "+args[0], err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", s.ID, s.PermissionLevel)
			return err
		},
	}
	t.flags(cmd)
	return cmd
}

func asksCommand() *cobra.Command {
	var t terminalChannel
	var follow bool
	cmd := &cobra.Command{
		Use:   "asks [--follow]",
		Short: "List the asks waiting for a person's answer",
		Long: `Lists the asks no one has answered yet, oldest first: the decision id (for
pdp answer), the session, the capability, how long ago it was asked, who
is waiting on it (the token a runtime parked on ?wait= with, and for how
long, or "nobody") and the call (its command or path), and under a call
allow_session can grant, the fingerprints it would grant; under an ask
of the Rule of Two (FLOW_RULE_OF_TWO) its reason, which names the calls
that gave the session its flow labels, and under any other ask whose call
carries labels, the labels allowing it would give the session. With --follow it then prints each new
ask as it is made (the live event stream, GET /v1/events) until
interrupted. Control characters in the call are shown escaped: the
arguments come from the model.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return listAsks(ctx, t, cmd.OutOrStdout(), cmd.ErrOrStderr(), follow)
		},
	}
	t.flags(cmd)
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "print each new ask as it is made")
	return cmd
}

// listAsks prints the pending asks, and with follow every new one.
func listAsks(ctx context.Context, t terminalChannel, out, errOut io.Writer, follow bool) error {
	c := t.client(ctx, errOut)
	seen := map[string]bool{}
	var stream *client.Stream
	if follow {
		// Listening before listing: an ask made in between comes in both
		// and is printed once. Without the stream, followAsks finds out.
		if stream, _ = c.Events(ctx, ""); stream != nil {
			defer stream.Close()
		}
	}
	asks, err := pendingAsks(ctx, c, seen)
	if err != nil {
		return t.failed("asks", err)
	}
	if len(asks) == 0 && !follow {
		_, err := fmt.Fprintln(out, "no pending asks")
		return err
	}
	fmt.Fprintf(out, askColumns, "ID", "SESSION", "CAPABILITY", "AGE", "WAITING", "CALL")
	if err := printAsks(out, asks); err != nil || !follow {
		return err
	}
	return followAsks(ctx, t, c, stream, seen, out, errOut)
}

// pendingAsks pages through the asks newest first and returns those not
// seen before that have no answer, oldest first. Once seen is filled, a
// page holding an ask seen before is the last one needed.
func pendingAsks(ctx context.Context, c *client.Client, seen map[string]bool) ([]client.Event, error) {
	var out []client.Event
	caughtUp := len(seen) > 0
	before := ""
	for {
		page, err := c.Decisions(ctx, client.Filter{Decision: client.Ask, Before: before, Limit: 500})
		if err != nil {
			return nil, err
		}
		reachedSeen := false
		for _, ev := range page.Decisions {
			if seen[ev.DecisionID] {
				reachedSeen = true
				continue
			}
			seen[ev.DecisionID] = true
			if ev.Answer == nil {
				out = append(out, ev.Event)
			}
		}
		if page.NextBefore == "" || (caughtUp && reachedSeen) {
			break
		}
		before = page.NextBefore
	}
	slices.Reverse(out)
	return out, nil
}

// askColumns lays out the list; fixed widths, so the rows --follow
// prints later line up with the first ones.
const askColumns = "%-24s  %-24s  %-30s  %5s  %-24s  %s\n"

func printAsks(w io.Writer, asks []client.Event) error {
	for _, ev := range asks {
		_, err := fmt.Fprintf(w, askColumns, printable(ev.DecisionID), printable(ev.SessionID),
			printable(deref(ev.Capability, ev.Tool)), age(time.Since(ev.Time)), printable(waitingSummary(ev.Waiting)), printable(callSummary(ev.Args)))
		if err != nil {
			return err
		}
		for _, line := range []string{wouldGrantLine(ev.WouldGrant), flowLine(ev.Decision)} {
			if line == "" {
				continue
			}
			if _, err := fmt.Fprintf(w, "%26s%s\n", "", line); err != nil {
				return err
			}
		}
	}
	return nil
}

// wouldGrantLine says, under an ask, what allow_session (and
// allow_project) would grant: the fingerprints the answer stores,
// escaped like the call; "" when the call cannot be granted.
func wouldGrantLine(fingerprints []string) string {
	if len(fingerprints) == 0 {
		return ""
	}
	shown := make([]string, len(fingerprints))
	for i, fp := range fingerprints {
		shown[i] = "`" + printable(fp) + "`"
	}
	return "allow for this session grants: " + strings.Join(shown, ", ")
}

// flowLine says, under an ask, what it means for the session's flow
// (docs/design.md §4, "Flow"): the Rule of Two's reason for its own ask,
// else the labels the call would give the session if allowed; "" for
// none.
func flowLine(d client.Decision) string {
	if d.Rule == api.FlowRule {
		return "flow: " + printable(d.Reason)
	}
	if len(d.Labels) == 0 {
		return ""
	}
	return "flow: allowing it gives the session " + printable(strings.Join(d.Labels, ", "))
}

// waitingSummary says who waits on an ask, as the console does: the
// first waiter and for how long ("runtime-a, 2m", "+1" for each other),
// "nobody", or "-" when the server did not say (an ask just printed
// from the event stream, or an older server).
func waitingSummary(w []client.Waiter) string {
	switch {
	case w == nil:
		return "-"
	case len(w) == 0:
		return "nobody"
	}
	s := w[0].By + ", " + age(time.Since(w[0].Since))
	if len(w) > 1 {
		s += fmt.Sprintf(" +%d", len(w)-1)
	}
	return s
}

// callSummary is what a person needs to recognise a call: its command,
// else its path(s), else its arguments as JSON, cut to a line.
func callSummary(args map[string]any) string {
	s := ""
	for _, key := range []string{"command", "file_path", "path", "notebook_path", "paths", "url", "uri", "pattern"} {
		switch v := args[key].(type) {
		case string:
			s = v
		case []any:
			parts := make([]string, 0, len(v))
			for _, p := range v {
				parts = append(parts, fmt.Sprint(p))
			}
			s = strings.Join(parts, " ")
		}
		if s != "" {
			break
		}
	}
	if s == "" && len(args) > 0 {
		raw, _ := json.Marshal(args)
		s = string(raw)
	}
	if r := []rune(s); len(r) > 100 {
		s = string(r[:100]) + "…"
	}
	return s
}

// printable escapes what a terminal would act on (escape sequences,
// bidirectional overrides, line breaks): the text comes from the model.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsPrint(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

func deref(s *string, fallback string) string {
	if s == nil {
		return fallback
	}
	return *s
}

// age is a duration as a person reads it at a glance: 12s, 5m, 3h, 2d.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(0, int(d.Seconds())))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
