package httpapi_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/policies"
)

// timeline records when each state could have been in effect: a change
// may take effect anywhere between its request and its answer.
type timeline struct {
	mu      sync.Mutex
	changes []change // in order
}

type change struct {
	value      string
	start, end time.Time
}

func (tl *timeline) set(value string, apply func()) {
	tl.mu.Lock()
	i := len(tl.changes)
	tl.changes = append(tl.changes, change{value: value, start: time.Now()})
	tl.mu.Unlock()
	apply()
	tl.mu.Lock()
	tl.changes[i].end = time.Now()
	tl.mu.Unlock()
}

// possible lists the values that may have been in effect during [s, e].
func (tl *timeline) possible(s, e time.Time) map[string]bool {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	out := map[string]bool{}
	for i, c := range tl.changes {
		// In effect from its start until the next change's end.
		until := time.Now().Add(time.Hour)
		if i+1 < len(tl.changes) {
			until = tl.changes[i+1].end
		}
		if !c.start.After(e) && !until.Before(s) {
			out[c.value] = true
		}
	}
	return out
}

// until calls step with 0, 1, 2, … until stop is closed.
func until(stop <-chan struct{}, step func(i int)) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		step(i)
	}
}

func denyReadsPolicy(t *testing.T) *pdp.Policy {
	t.Helper()
	files := fstest.MapFS{}
	_ = fs.WalkDir(policies.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			raw, _ := fs.ReadFile(policies.FS, p)
			files[p] = &fstest.MapFile{Data: raw}
		}
		return err
	})
	var data map[string]any
	_ = json.Unmarshal(files["data.json"].Data, &data)
	data["rules"].(map[string]any)["fs.read"] = "deny"
	files["data.json"].Data, _ = json.Marshal(data)
	p, err := policysource.LoadFS(context.Background(), files, "deny-reads")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConcurrentDecisionsMatchSomeState drives 64 deciders while the
// session's level switches, a grant is created and the policy is swapped
// back and forth; every answer must be the one some state in effect
// during its call gives.
func TestConcurrentDecisionsMatchSomeState(t *testing.T) {
	s := newService(t)
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "c", "workspace": "/w"})
	allowReads := s.engine.Policy()
	denyReads := denyReadsPolicy(t)

	var levels, grants, revisions timeline
	levels.set("READ_ONLY", func() {})
	grants.set("none", func() {})
	revisions.set(allowReads.Revision, func() {})

	stop := make(chan struct{})
	var changers sync.WaitGroup
	changers.Add(3)
	go func() { // level switches
		defer changers.Done()
		until(stop, func(i int) {
			level := []string{"READ_WRITE", "READ_ONLY"}[i%2]
			levels.set(level, func() { s.call("PATCH", "/v1/sessions/c", map[string]any{"permission_level": level}) })
			time.Sleep(3 * time.Millisecond)
		})
	}()
	go func() { // one grant, created by answering an ask
		defer changers.Done()
		time.Sleep(100 * time.Millisecond)
		_, ask := s.call("POST", "/v1/decide", map[string]any{"session_id": "c", "tool": "shell", "args": map[string]any{"command": "make check"}, "cwd": "/w"})
		grants.set("make check", func() {
			s.call("POST", "/v1/decisions/"+ask["decision_id"].(string)+"/answer", map[string]any{"answer": "allow_session"})
		})
	}()
	go func() { // policy swaps
		defer changers.Done()
		until(stop, func(i int) {
			p := []*pdp.Policy{denyReads, allowReads}[i%2]
			revisions.set(p.Revision, func() { _ = s.engine.Swap(p) })
			time.Sleep(5 * time.Millisecond)
		})
	}()

	calls := []map[string]any{
		{"session_id": "c", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/w"},
		{"session_id": "c", "tool": "write_file", "args": map[string]any{"path": "a"}, "cwd": "/w"},
		{"session_id": "c", "tool": "shell", "args": map[string]any{"command": "make check"}, "cwd": "/w"},
		{"session_id": "c", "tool": "shell", "args": map[string]any{"command": "make check; rm -rf build"}, "cwd": "/w"},
	}
	type result struct {
		code       int
		d, call    map[string]any
		start, end time.Time
	}
	var deciders sync.WaitGroup
	var mu sync.Mutex
	var results []result
	for g := 0; g < 64; g++ {
		deciders.Add(1)
		go func(g int) {
			defer deciders.Done()
			for i := 0; i < 15; i++ {
				call := calls[(g+i)%len(calls)]
				start := time.Now()
				code, d := s.call("POST", "/v1/decide", call)
				mu.Lock()
				results = append(results, result{code, d, call, start, time.Now()})
				mu.Unlock()
			}
		}(g)
	}
	deciders.Wait()
	close(stop)
	changers.Wait()
	// Judge once the whole history is known.
	var problems []string
	for _, r := range results {
		if p := judge(r.code, r.d, r.call, levels.possible(r.start, r.end), grants.possible(r.start, r.end), revisions.possible(r.start, r.end), allowReads.Revision); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		t.Fatalf("%d of %d decisions matched no state in effect during their call, e.g. %s", len(problems), len(results), problems[0])
	}
	t.Logf("%d decisions, %d level switches, %d policy swaps", len(results), len(levels.changes), len(revisions.changes))
}

// judge returns why a decision matches no possible state, or "".
func judge(code int, d, call map[string]any, levels, grants, revisions map[string]bool, allowRev string) string {
	if code != 200 {
		return "status " + toJSON(d)
	}
	rev, _ := d["revision"].(string)
	if !revisions[rev] {
		return "revision " + rev + " was not active"
	}
	args := call["args"].(map[string]any)
	got := d["decision"].(string) + "/" + d["source"].(string)
	var want []string
	switch call["tool"] {
	case "read_file":
		if rev == allowRev {
			want = []string{"allow/level"}
		} else {
			want = []string{"deny/config"}
		}
	case "write_file":
		if levels["READ_ONLY"] {
			want = append(want, "ask/level")
		}
		if levels["READ_WRITE"] {
			want = append(want, "allow/level")
		}
	case "shell":
		if args["command"] != "make check" || grants["none"] {
			want = append(want, "ask/level") // no grant covers it (yet)
		}
		if args["command"] == "make check" && grants["make check"] {
			want = append(want, "allow/session-grant")
		}
	}
	for _, w := range want {
		if got == w {
			return ""
		}
	}
	return got + " for " + call["tool"].(string) + " " + toJSON(args) + ", possible " + toJSON(want)
}

func toJSON(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}
