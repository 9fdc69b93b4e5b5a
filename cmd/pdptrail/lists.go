package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/toolperm/pdp/pdp"
)

// listQuery is one GET /v1/decisions to time.
type listQuery struct {
	name  string
	query url.Values
}

// listQueries are every combination of session, decision, source, since
// (the last hour) and before (two days back), and queries that
// match nothing.
func listQueries(session string, now time.Time) []listQuery {
	since := now.Add(-time.Hour).UTC().Format(time.RFC3339)
	before := pdp.DecisionIDFloor(now.Add(-2 * 24 * time.Hour))
	var out []listQuery
	for mask := 0; mask < 32; mask++ {
		q := url.Values{"limit": {"50"}}
		var name []string
		for bit, kv := range [][2]string{{"session_id", session}, {"decision", "ask"}, {"source", "rule"}, {"since", since}, {"before", before}} {
			if mask&(1<<bit) != 0 {
				q.Set(kv[0], kv[1])
				name = append(name, strings.TrimSuffix(kv[0], "_id"))
			}
		}
		if len(name) == 0 {
			name = []string{"(none)"}
		}
		out = append(out, listQuery{strings.Join(name, "+"), q})
	}
	nothing := []listQuery{
		{"nothing: unknown session", url.Values{"session_id": {"no-such-session"}, "limit": {"50"}}},
		{"nothing: source=grant, decision=deny", url.Values{"source": {"grant"}, "decision": {"deny"}, "limit": {"50"}}},
		{"nothing: session+source=grant+decision=deny", url.Values{"session_id": {session}, "source": {"grant"}, "decision": {"deny"}, "limit": {"50"}}},
		{"nothing: since tomorrow", url.Values{"since": {now.Add(24 * time.Hour).UTC().Format(time.RFC3339)}, "source": {"rule"}, "limit": {"50"}}},
	}
	return append(out, nothing...)
}

func lists(argv []string) error {
	fs := flag.NewFlagSet("lists", flag.ExitOnError)
	base := fs.String("url", "http://127.0.0.1:8181", "base URL of the PDP")
	rounds := fs.Int("rounds", 200, "times each query is asked")
	session := fs.String("session", "trail-00042", "the session to filter on")
	at := fs.String("at", "", "the trail's newest time (RFC 3339; pdp audit stats prints it), to take since and before from; default now")
	_ = fs.Parse(argv)
	now := time.Now()
	if *at != "" {
		var err error
		if now, err = time.Parse(time.RFC3339, *at); err != nil {
			return fmt.Errorf("-at: %w", err)
		}
	}
	client := &http.Client{Timeout: time.Minute}
	fmt.Println("| query | items | p50 | p99 |")
	fmt.Println("|---|---|---|---|")
	for _, q := range listQueries(*session, now) {
		var took []time.Duration
		items := 0
		for range *rounds {
			start := time.Now()
			resp, err := client.Get(*base + "/v1/decisions?" + q.query.Encode())
			if err != nil {
				return err
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: %s: %s", q.name, resp.Status, body)
			}
			took = append(took, time.Since(start))
			items = strings.Count(string(body), `"decision_id"`)
		}
		slices.Sort(took)
		fmt.Printf("| %s | %d | %s | %s |\n", q.name, items, ms(took[len(took)/2]), ms(took[len(took)*99/100]))
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
