package deploy_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/toolperm/pdp/internal/app"
	"github.com/toolperm/pdp/internal/config"
)

// exportedMetrics are the series names the server's registry exports:
// the families a server that has decided gathers (a histogram's with
// its _bucket, _sum and _count), and every collector registered, for
// the labelled families no event has started yet.
func exportedMetrics(t *testing.T) map[string]bool {
	cfg := config.Default()
	cfg.DB.Path = filepath.Join(t.TempDir(), "pdp.db")
	cfg.Server.Addr = "127.0.0.1:0"
	cfg.Notify.Sinks = []config.NotifySink{{Name: "ops", Kind: "command", Command: []string{"/bin/true"}, Events: []string{"ask"}}}
	s, err := app.New(context.Background(), cfg, app.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s.Handler)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/decide", "application/json", strings.NewReader(`{"session_id":"s","tool":"shell","args":{"command":"make"},"cwd":"/w"}`))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("decide: %v %v", resp, err)
	}
	resp.Body.Close()

	names := map[string]bool{}
	families, err := s.Metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		names[f.GetName()] = true
		if f.GetType() == dto.MetricType_HISTOGRAM || f.GetType() == dto.MetricType_SUMMARY {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				names[f.GetName()+suffix] = true
			}
		}
	}
	descs := make(chan *prometheus.Desc)
	go func() {
		s.Metrics.Registry.Describe(descs)
		close(descs)
	}()
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range descs {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			names[m[1]] = true
		}
	}
	return names
}

var (
	promStrings   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promMatchers  = regexp.MustCompile(`\{[^{}]*\}|\[[^\[\]]*\]`)
	promGrouping  = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	promIdent     = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	promOperators = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true, "group_left": true, "group_right": true}
)

// metricNames are the metric names a PromQL expression reads: its
// identifiers that are not a function (followed by "("), a label, a
// label value, a range or an operator.
func metricNames(expr string) []string {
	e := promStrings.ReplaceAllString(expr, `""`)
	e = promMatchers.ReplaceAllString(e, " ")
	e = promGrouping.ReplaceAllString(e, " ")
	var out []string
	for _, loc := range promIdent.FindAllStringIndex(e, -1) {
		word := e[loc[0]:loc[1]]
		rest := strings.TrimLeft(e[loc[1]:], " ")
		if strings.HasPrefix(rest, "(") || promOperators[strings.ToLower(word)] {
			continue
		}
		out = append(out, word)
	}
	return out
}

// dashboardQueries are the PromQL expressions of a Grafana dashboard:
// every panel target's (rows' panels included), the template
// variables' and the annotations'.
func dashboardQueries(t *testing.T, path string) []string {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title      string           `json:"title"`
		UID        string           `json:"uid"`
		Panels     []map[string]any `json:"panels"`
		Templating struct {
			List []struct {
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
		Annotations struct {
			List []struct {
				Expr string `json:"expr"`
			} `json:"list"`
		} `json:"annotations"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s is not a dashboard's JSON: %v", path, err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("%s has no title, uid or panels", path)
	}
	var out []string
	var walk func([]map[string]any)
	walk = func(panels []map[string]any) {
		for _, p := range panels {
			targets, _ := p["targets"].([]any)
			if p["type"] != "row" && len(targets) == 0 {
				t.Errorf("panel %q has no query", p["title"])
			}
			for _, tg := range targets {
				expr, _ := tg.(map[string]any)["expr"].(string)
				if expr == "" {
					t.Errorf("panel %q has a target without expr", p["title"])
				}
				out = append(out, expr)
			}
			var nested []map[string]any
			if sub, ok := p["panels"].([]any); ok {
				for _, x := range sub {
					nested = append(nested, x.(map[string]any))
				}
			}
			walk(nested)
		}
	}
	walk(d.Panels)
	labelValues := regexp.MustCompile(`label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*,`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(string)
		if m, ok := v.Query.(map[string]any); ok {
			q, _ = m["query"].(string)
		}
		if m := labelValues.FindStringSubmatch(q); m != nil {
			out = append(out, m[1])
		} else if q != "" {
			out = append(out, q)
		}
	}
	for _, a := range d.Annotations.List {
		if a.Expr != "" {
			out = append(out, a.Expr)
		}
	}
	return out
}

// TestGrafanaDashboardQueriesExportedMetrics: every query of the
// dashboards in deploy/grafana reads only metrics the server exports,
// as its registry says; a renamed or removed metric fails here before
// a panel goes blank.
func TestGrafanaDashboardQueriesExportedMetrics(t *testing.T) {
	exported := exportedMetrics(t)
	paths, err := filepath.Glob("grafana/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no dashboards in deploy/grafana: %v", err)
	}
	for _, path := range paths {
		used := map[string]bool{}
		for _, q := range dashboardQueries(t, path) {
			names := metricNames(q)
			if len(names) == 0 {
				t.Errorf("%s: %q reads no metric", path, q)
			}
			for _, n := range names {
				used[n] = true
				if !exported[n] {
					t.Errorf("%s: %q reads %s, which the server does not export", path, q, n)
				}
			}
		}
		var list []string
		for n := range used {
			list = append(list, n)
		}
		sort.Strings(list)
		t.Logf("%s reads %d metrics: %s", path, len(list), strings.Join(list, " "))
	}
}

// TestMetricNamesOfAQuery: the reader of a query's metric names skips
// functions, labels, label values, ranges and operators.
func TestMetricNamesOfAQuery(t *testing.T) {
	got := metricNames(`histogram_quantile(0.99, sum by (le, route) (rate(pdp_http_request_duration_seconds_bucket{instance=~"$instance",code=~"5.."}[$__rate_interval]))) / on (instance) group_left sum(up{job="x"}) and bool 1`)
	if strings.Join(got, ",") != "pdp_http_request_duration_seconds_bucket,up" {
		t.Fatalf("names = %v", got)
	}
}
