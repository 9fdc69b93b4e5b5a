package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// wsToken stands for the session's workspace in the committed traffic:
// the converter maps each trajectory's repository root (/testbed,
// /workspace/<repo>, ...) to it, and the replay maps it to a directory
// it creates for the session.
const wsToken = "{ws}"

// trajectory is one line of testdata/traffic/*.jsonl: one agent run, its
// tool calls in order.
type trajectory struct {
	Session string `json:"session"`
	Source  string `json:"source"`
	Calls   []call `json:"calls"`
}

type call struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

func loadTraffic(dir string) ([]trajectory, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no trajectories in %s", dir)
	}
	sort.Strings(files)
	var out []trajectory
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for n := 1; sc.Scan(); n++ {
			if len(strings.TrimSpace(sc.Text())) == 0 {
				continue
			}
			var t trajectory
			if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
				fh.Close()
				return nil, fmt.Errorf("%s:%d: %v", f, n, err)
			}
			out = append(out, t)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
	}
	return out, nil
}

// mapWS replaces the workspace token in every string of v.
func mapWS(v any, ws string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, wsToken, ws)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = mapWS(e, ws)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = mapWS(e, ws)
		}
		return s
	}
	return v
}

// event is what happened to one call at one level.
type event struct {
	source, tool, text, shape string
	d                         decision
	decideErr                 error
	answer                    string // allow_session, allow_once
	answerErr                 error  // the first answer's refusal
	fallbackErr               error  // allow_once after a refused allow_session
}

type levelStats struct {
	Level            string       `json:"level"`
	Sessions         int          `json:"sessions"`
	Calls            int          `json:"calls"`
	Allows           int          `json:"allows"`
	Asks             int          `json:"asks"`
	Denies           int          `json:"denies"`
	AsksPer100       float64      `json:"asks_per_100_calls"`
	AsksPerSession   float64      `json:"asks_per_session"`
	AsksNotGrantable int          `json:"asks_not_grantable"`
	NotGrantable     float64      `json:"share_of_asks_not_grantable"`
	ShellCalls       int          `json:"shell_calls"`
	ShellAsks        int          `json:"shell_asks"`
	AllowedByGrant   int          `json:"allowed_by_session_grant"`
	Errors           int          `json:"errors"`
	BySource         []sourceRow  `json:"by_source"`
	TopShapes        []countRow   `json:"top_askers_by_command_shape"`
	TopPrograms      []countRow   `json:"top_askers_by_program"`
	TopRules         []countRow   `json:"top_askers_by_rule"`
	AsksByRule       []ruleRow    `json:"asks_by_rule"`
	DeniesByRule     []ruleRow    `json:"denies_by_rule"`
	ErrorKinds       []errorGroup `json:"errors_by_kind"`
	// SessionsWithLabel counts the sessions that ended with each flow
	// label.
	SessionsWithLabel map[string]int `json:"sessions_with_label"`
}

type sourceRow struct {
	Source     string  `json:"source"`
	Sessions   int     `json:"sessions"`
	Calls      int     `json:"calls"`
	Asks       int     `json:"asks"`
	AsksPer100 float64 `json:"asks_per_100_calls"`
}

type countRow struct {
	Key          string `json:"key"`
	Asks         int    `json:"asks"`
	NotGrantable int    `json:"not_grantable"`
	Example      string `json:"example"`
}

type ruleRow struct {
	Rule     string    `json:"rule"`
	Count    int       `json:"count"`
	Examples []example `json:"examples"`
}

type example struct {
	Source string `json:"source"`
	Tool   string `json:"tool"`
	Call   string `json:"call"`
	Reason string `json:"reason"`
}

type errorGroup struct {
	Kind     string    `json:"kind"`
	Count    int       `json:"count"`
	Examples []example `json:"examples"`
}

type trafficReport struct {
	Sessions   int          `json:"sessions"`
	Calls      int          `json:"calls"`
	ShellCalls int          `json:"shell_calls"`
	Sources    []sourceRow  `json:"sources"`
	Levels     []levelStats `json:"levels"`
}

func runTraffic(ctx context.Context, url, wsRoot string, o options) (*trafficReport, error) {
	trajs, err := loadTraffic(filepath.Join(o.data, "traffic"))
	if err != nil {
		return nil, err
	}
	rep := &trafficReport{Sessions: len(trajs)}
	bySrc := map[string]*sourceRow{}
	var srcOrder []string
	for _, t := range trajs {
		r := bySrc[t.Source]
		if r == nil {
			r = &sourceRow{Source: t.Source}
			bySrc[t.Source] = r
			srcOrder = append(srcOrder, t.Source)
		}
		r.Sessions++
		r.Calls += len(t.Calls)
		rep.Calls += len(t.Calls)
		for _, c := range t.Calls {
			if c.Tool == "Bash" {
				rep.ShellCalls++
			}
		}
	}
	for _, s := range srcOrder {
		rep.Sources = append(rep.Sources, *bySrc[s])
	}
	c := newClient(url, o.workers)
	for li, level := range o.levels {
		o.logf("traffic: %s, %d sessions", level, len(trajs))
		events := make([][]event, len(trajs))
		labels := make([][]string, len(trajs))
		jobs := make(chan int)
		var wg sync.WaitGroup
		var firstErr error
		var mu sync.Mutex
		for w := 0; w < o.workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range jobs {
					id := fmt.Sprintf("asks-%d-%s-%04d", li, strings.ToLower(level), i)
					ws := filepath.Join(wsRoot, id)
					evs, got, err := replaySession(ctx, c, id, ws, level, trajs[i])
					if err != nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = err
						}
						mu.Unlock()
					}
					events[i], labels[i] = evs, got
				}
			}()
		}
		for i := range trajs {
			if ctx.Err() != nil {
				break
			}
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		if firstErr != nil {
			return nil, firstErr
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		st := summarize(level, trajs, events, o)
		st.SessionsWithLabel = map[string]int{}
		for _, ls := range labels {
			for _, l := range ls {
				st.SessionsWithLabel[l]++
			}
		}
		rep.Levels = append(rep.Levels, st)
	}
	return rep, nil
}

// replaySession runs one trajectory as one session, and returns the
// flow labels the session had at its end; an error is one the replay
// cannot go on after (the session could not be created, the server is
// gone).
func replaySession(ctx context.Context, c *client, id, ws, level string, t trajectory) ([]event, []string, error) {
	evs, err := replayCalls(ctx, c, id, ws, level, t)
	if err != nil {
		return evs, nil, err
	}
	labels, err := c.labels(ctx, id)
	return evs, labels, err
}

func replayCalls(ctx context.Context, c *client, id, ws, level string, t trajectory) ([]event, error) {
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return nil, err
	}
	if err := c.createSession(ctx, id, ws, level); err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	evs := make([]event, 0, len(t.Calls))
	for _, cl := range t.Calls {
		if ctx.Err() != nil {
			return evs, ctx.Err()
		}
		args, _ := mapWS(cl.Args, ws).(map[string]any)
		ev := event{source: t.Source, tool: cl.Tool, text: callText(cl.Tool, args, ws)}
		if cl.Tool == "Bash" {
			cmd, _ := args["command"].(string)
			ev.shape = commandShape(strings.ReplaceAll(cmd, ws, "<ws>"))
		} else {
			ev.shape = cl.Tool
		}
		d, err := c.decide(ctx, id, cl.Tool, args, ws)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) {
				return evs, fmt.Errorf("decide in %s: %w", id, err)
			}
			ev.decideErr = err
			evs = append(evs, ev)
			continue
		}
		ev.d = d
		if d.Decision == "ask" {
			ev.answer = "allow_once"
			if d.Grantable || d.Rule == "FLOW_RULE_OF_TWO" {
				// allow_session of the flow rule's ask accepts the
				// three labels for the session.
				ev.answer = "allow_session"
			}
			if err := c.answer(ctx, d.DecisionID, ev.answer); err != nil {
				var ae *apiError
				if !errors.As(err, &ae) {
					return evs, fmt.Errorf("answer in %s: %w", id, err)
				}
				ev.answerErr = err
				if ev.answer == "allow_session" {
					// The person tries again with what is left.
					if err := c.answer(ctx, d.DecisionID, "allow_once"); err != nil {
						ev.fallbackErr = err
					}
				}
			}
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// callText is how a call is shown in examples: the command, or the tool
// and its path, with the workspace written <ws>.
func callText(tool string, args map[string]any, ws string) string {
	var s string
	switch tool {
	case "Bash":
		s, _ = args["command"].(string)
	default:
		var parts []string
		for _, k := range []string{"file_path", "path", "pattern", "notebook_path"} {
			if v, ok := args[k].(string); ok {
				parts = append(parts, k+"="+v)
			}
		}
		s = tool + " " + strings.Join(parts, " ")
	}
	return strings.ReplaceAll(s, ws, "<ws>")
}

var spaces = regexp.MustCompile(`\s+`)

func clip(s string, n int) string {
	s = spaces.ReplaceAllString(strings.TrimSpace(s), " ")
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func summarize(level string, trajs []trajectory, events [][]event, o options) levelStats {
	st := levelStats{Level: level, Sessions: len(trajs)}
	shapes := map[string]*countRow{}
	programs := map[string]*countRow{}
	rules := map[string]*countRow{}
	asksBy := map[string]*ruleRow{}
	deniesBy := map[string]*ruleRow{}
	errs := map[string]*errorGroup{}
	srcs := map[string]*sourceRow{}
	var srcOrder []string
	addErr := func(kind string, ev event, detail string) {
		st.Errors++
		g := errs[kind]
		if g == nil {
			g = &errorGroup{Kind: kind}
			errs[kind] = g
		}
		g.Count++
		if len(g.Examples) < o.examples {
			g.Examples = append(g.Examples, example{Source: ev.source, Tool: ev.tool, Call: clip(ev.text, 200), Reason: clip(detail, 240)})
		}
	}
	count := func(m map[string]*countRow, key string, ev event) {
		r := m[key]
		if r == nil {
			r = &countRow{Key: key, Example: clip(ev.text, 120)}
			m[key] = r
		}
		r.Asks++
		if !ev.d.Grantable {
			r.NotGrantable++
		}
	}
	byRule := func(m map[string]*ruleRow, ev event) {
		r := m[ev.d.Rule]
		if r == nil {
			r = &ruleRow{Rule: ev.d.Rule}
			m[ev.d.Rule] = r
		}
		r.Count++
		if len(r.Examples) < o.examples {
			r.Examples = append(r.Examples, example{Source: ev.source, Tool: ev.tool, Call: clip(ev.text, 160), Reason: clip(ev.d.Reason, 240)})
		}
	}
	for i, evs := range events {
		src := trajs[i].Source
		sr := srcs[src]
		if sr == nil {
			sr = &sourceRow{Source: src}
			srcs[src] = sr
			srcOrder = append(srcOrder, src)
		}
		sr.Sessions++
		for _, ev := range evs {
			st.Calls++
			sr.Calls++
			if ev.tool == "Bash" {
				st.ShellCalls++
			}
			if ev.decideErr != nil {
				addErr("decide refused", ev, ev.decideErr.Error())
				continue
			}
			switch ev.d.Decision {
			case "allow":
				st.Allows++
				if ev.d.Source == "session-grant" {
					st.AllowedByGrant++
				}
			case "deny":
				st.Denies++
				byRule(deniesBy, ev)
			case "ask":
				st.Asks++
				sr.Asks++
				if ev.tool == "Bash" {
					st.ShellAsks++
				}
				if !ev.d.Grantable {
					st.AsksNotGrantable++
				}
				count(shapes, ev.shape, ev)
				count(programs, firstProgram(ev), ev)
				count(rules, ev.d.Rule, ev)
				byRule(asksBy, ev)
				if ev.answerErr != nil {
					kind := "answer " + ev.answer + " refused"
					var ae *apiError
					if errors.As(ev.answerErr, &ae) && ae.Status == 422 && ev.answer == "allow_session" {
						kind = "grantable, then allow_session refused 422"
					}
					addErr(kind, ev, ev.answerErr.Error())
				}
				if ev.fallbackErr != nil {
					addErr("allow_once refused after allow_session was", ev, ev.fallbackErr.Error())
				}
			default:
				addErr("unknown decision "+ev.d.Decision, ev, ev.d.Reason)
			}
		}
	}
	if st.Calls > 0 {
		st.AsksPer100 = 100 * float64(st.Asks) / float64(st.Calls)
	}
	if st.Sessions > 0 {
		st.AsksPerSession = float64(st.Asks) / float64(st.Sessions)
	}
	if st.Asks > 0 {
		st.NotGrantable = float64(st.AsksNotGrantable) / float64(st.Asks)
	}
	for _, s := range srcOrder {
		r := *srcs[s]
		if r.Calls > 0 {
			r.AsksPer100 = 100 * float64(r.Asks) / float64(r.Calls)
		}
		st.BySource = append(st.BySource, r)
	}
	st.TopShapes = topCounts(shapes, o.top)
	st.TopPrograms = topCounts(programs, o.top)
	st.TopRules = topCounts(rules, o.top)
	st.AsksByRule = sortedRules(asksBy)
	st.DeniesByRule = sortedRules(deniesBy)
	for _, g := range errs {
		st.ErrorKinds = append(st.ErrorKinds, *g)
	}
	sort.Slice(st.ErrorKinds, func(i, j int) bool {
		if st.ErrorKinds[i].Count != st.ErrorKinds[j].Count {
			return st.ErrorKinds[i].Count > st.ErrorKinds[j].Count
		}
		return st.ErrorKinds[i].Kind < st.ErrorKinds[j].Kind
	})
	return st
}

func firstProgram(ev event) string {
	if ev.tool != "Bash" {
		return ev.tool + " (tool)"
	}
	f := strings.Fields(strings.NewReplacer("&&", " ", "||", " ", "|", " ", ";", " ").Replace(ev.shape))
	for _, w := range f {
		if w == "cd" || w == "(" || w == "{" {
			continue
		}
		return w
	}
	if len(f) > 0 {
		return f[0]
	}
	return "(empty)"
}

func topCounts(m map[string]*countRow, n int) []countRow {
	out := make([]countRow, 0, len(m))
	for _, r := range m {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Asks != out[j].Asks {
			return out[i].Asks > out[j].Asks
		}
		return out[i].Key < out[j].Key
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

func sortedRules(m map[string]*ruleRow) []ruleRow {
	out := make([]ruleRow, 0, len(m))
	for _, r := range m {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Rule < out[j].Rule
	})
	return out
}
