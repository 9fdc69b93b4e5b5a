package decisionlog_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/adapters/decisionlog"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/buildinfo"
	"github.com/toolperm/pdp/pdp"
)

func strPtr(s string) *string { return &s }

// event is a decision as the engine records it.
func event(id string, args map[string]any) pdp.AuditRecord {
	return pdp.AuditRecord{
		Decision: api.Decision{
			DecisionID: id, Decision: api.Ask, NeedApproval: true, Source: "level", Rule: "shell.exec",
			Reason: "Shell commands need approval at READ_ONLY.", Capability: strPtr("shell.exec"),
			Fingerprint: strPtr("git push"), Grantable: true, Revision: "rev-42",
		},
		Request:   api.DecideRequest{SessionID: "s1", Tool: "shell", Args: args, Cwd: "/w"},
		SessionID: "s1",
		Time:      time.Date(2026, 3, 1, 12, 30, 45, 123456789, time.FixedZone("CET", 3600)),
		Latency:   1500 * time.Microsecond,
	}
}

// lines parses every line of b as a JSON object.
func lines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not a JSON object: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// fileLines parses every line of the file at path as a JSON object.
func fileLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return lines(t, b)
}

func TestLineIsAnOPADecisionLogEvent(t *testing.T) {
	var buf bytes.Buffer
	w := decisionlog.New(&buf, decisionlog.Options{ReplicaID: "replica-a", Version: "v1.2.3"})
	ev := event("d-1", map[string]any{"command": "git push", "timeout": 30.0})
	if err := w.Record(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := lines(t, buf.Bytes())
	if len(got) != 1 {
		t.Fatalf("%d lines, want 1:\n%s", len(got), buf.String())
	}
	var result map[string]any
	b, _ := json.Marshal(ev.Decision)
	_ = json.Unmarshal(b, &result)
	want := map[string]any{
		"decision_id": "d-1",
		"path":        "toolperm/answer",
		"input": map[string]any{
			"session_id": "s1", "tool": "shell", "cwd": "/w",
			"args": map[string]any{"command": "git push", "timeout": 30.0},
		},
		"result":    result,
		"timestamp": "2026-03-01T11:30:45.123456789Z",
		"bundles":   map[string]any{"toolperm": map[string]any{"revision": "rev-42"}},
		"labels":    map[string]any{"id": "replica-a", "version": "v1.2.3"},
		"metrics":   map[string]any{"timer_server_handler_ns": 1.5e6},
	}
	if !reflect.DeepEqual(got[0], want) {
		t.Fatalf("line:\n%v\nwant:\n%v", got[0], want)
	}
	for _, key := range []string{"decision_id", "decision", "need_approval", "source", "rule", "reason", "capability", "fingerprint", "grantable", "would_grant", "danger", "revision"} {
		if _, ok := result[key]; !ok {
			t.Errorf("result lacks %q, which every answer has", key)
		}
	}
}

func TestLabelsDefaultToHostAndBuild(t *testing.T) {
	var buf bytes.Buffer
	w := decisionlog.New(&buf, decisionlog.Options{})
	if err := w.Record(context.Background(), event("d-1", nil)); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	host, _ := os.Hostname()
	labels := lines(t, buf.Bytes())[0]["labels"].(map[string]any)
	if labels["id"] != host || labels["version"] != buildinfo.Read().Version {
		t.Fatalf("labels %v, want id %q and version %q", labels, host, buildinfo.Read().Version)
	}
}

func TestMaskingAtAnyDepthAndCase(t *testing.T) {
	args := map[string]any{
		"command": "curl -H 'Authorization: x'",
		"Token":   "secret-1",
		"headers": map[string]any{"AUTHORIZATION": "Bearer secret-2", "accept": "json"},
		"edits": []any{
			map[string]any{"file_path": "a.txt", "Password": map[string]any{"nested": "secret-3"}},
			"plain",
		},
		"typed":   map[string]string{"token": "secret-4", "kept": "k"},
		"a/b~c":   map[string]any{"token": "secret-5"},
		"tokens":  "not a masked key",
		"content": nil,
	}
	before, _ := json.Marshal(args)
	var buf bytes.Buffer
	w := decisionlog.New(&buf, decisionlog.Options{Mask: []string{"token", "Authorization", " PASSWORD ", "content", ""}})
	if err := w.Record(context.Background(), event("d-1", args)); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	if after, _ := json.Marshal(args); !bytes.Equal(before, after) {
		t.Fatalf("the request's arguments were modified:\n%s\n%s", before, after)
	}
	if strings.Contains(buf.String(), "secret-") {
		t.Fatalf("a masked value reached the log: %s", buf.String())
	}
	line := lines(t, buf.Bytes())[0]
	got := line["input"].(map[string]any)["args"]
	want := map[string]any{
		"command": "curl -H 'Authorization: x'",
		"Token":   "***",
		"headers": map[string]any{"AUTHORIZATION": "***", "accept": "json"},
		"edits": []any{
			map[string]any{"file_path": "a.txt", "Password": "***"},
			"plain",
		},
		"typed":   map[string]any{"token": "***", "kept": "k"},
		"a/b~c":   map[string]any{"token": "***"},
		"tokens":  "not a masked key",
		"content": "***",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("args:\n%v\nwant:\n%v", got, want)
	}
	wantMasked := []any{"/input/args/Token", "/input/args/a~1b~0c/token", "/input/args/content",
		"/input/args/edits/0/Password", "/input/args/headers/AUTHORIZATION", "/input/args/typed/token"}
	if !reflect.DeepEqual(line["masked"], wantMasked) {
		t.Fatalf("masked = %v, want %v", line["masked"], wantMasked)
	}
}

func TestNothingMaskedNoMaskedField(t *testing.T) {
	var buf bytes.Buffer
	w := decisionlog.New(&buf, decisionlog.Options{Mask: []string{"token"}})
	_ = w.Record(context.Background(), event("d-1", map[string]any{"command": "ls"}))
	_ = w.Close()
	if _, ok := lines(t, buf.Bytes())[0]["masked"]; ok {
		t.Fatal("an event with nothing masked has a masked field")
	}
}

func TestCloseFlushesEverythingAndAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.jsonl")
	if err := os.WriteFile(path, []byte(`{"decision_id":"earlier"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := decisionlog.Open(path, decisionlog.Options{FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	const n = 50 // ~500 bytes each: well within the buffer
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Record(context.Background(), event(fmt.Sprintf("d-%03d", i), nil)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if b, _ := os.ReadFile(path); len(lines(t, b)) != 1 {
		t.Fatalf("%d lines before Close with an hour's interval and a buffer not full; want only the earlier one", len(lines(t, b)))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	got := fileLines(t, path)
	if len(got) != n+1 || got[0]["decision_id"] != "earlier" {
		t.Fatalf("%d lines after Close (first %v), want the earlier one and %d", len(got), got[0]["decision_id"], n)
	}
	if st := w.Stats(); st.Lines != n || st.Dropped != 0 {
		t.Fatalf("stats %+v, want %d lines and none dropped", st, n)
	}
	if err := w.Record(context.Background(), event("late", nil)); !errors.Is(err, decisionlog.ErrClosed) {
		t.Fatalf("Record after Close: %v, want ErrClosed", err)
	}
}

func TestFlushedWithinTheInterval(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.jsonl")
	w, err := decisionlog.Open(path, decisionlog.Options{FlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Record(context.Background(), event("d-1", nil)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(path); len(b) > 0 {
			if got := lines(t, b); len(got) != 1 || got[0]["decision_id"] != "d-1" {
				t.Fatalf("lines %v", got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the line was not written without a Close")
		}
	}
}

// failingOutput refuses writes until told otherwise.
type failingOutput struct {
	mu   sync.Mutex
	fail bool
	buf  bytes.Buffer
}

func (f *failingOutput) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return 0, errors.New("no space left on device")
	}
	return f.buf.Write(p)
}

func TestAWriteFailureLosesOnlyWhatItRefused(t *testing.T) {
	out := &failingOutput{fail: true}
	w := decisionlog.New(out, decisionlog.Options{FlushInterval: time.Hour})
	_ = w.Record(context.Background(), event("lost-1", nil))
	_ = w.Record(context.Background(), event("lost-2", nil))
	if err := w.Flush(); err == nil {
		t.Fatal("a failed flush reported no error")
	}
	out.mu.Lock()
	out.fail = false
	out.mu.Unlock()
	_ = w.Record(context.Background(), event("kept", nil))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := lines(t, out.buf.Bytes())
	if len(got) != 1 || got[0]["decision_id"] != "kept" {
		t.Fatalf("lines %v, want only the one written after the failure", got)
	}
	if st := w.Stats(); st.Lines != 1 || st.Dropped != 2 {
		t.Fatalf("stats %+v, want 1 line and 2 dropped", st)
	}
}

// trail is an audit log that keeps what it records, in order, with the
// log's length at the time, or refuses.
type trail struct {
	err  error
	seen []string
}

func (a *trail) Record(_ context.Context, ev pdp.AuditRecord) error {
	if a.err != nil {
		return a.err
	}
	a.seen = append(a.seen, ev.Decision.DecisionID)
	return nil
}

func TestTeeRecordsInTheTrailFirst(t *testing.T) {
	var buf bytes.Buffer
	w := decisionlog.New(&buf, decisionlog.Options{})
	primary := &trail{}
	audit := decisionlog.Tee(primary, w)
	if err := audit.Record(context.Background(), event("d-1", nil)); err != nil {
		t.Fatal(err)
	}
	primary.err = errors.New("database is locked")
	if err := audit.Record(context.Background(), event("refused", nil)); !errors.Is(err, primary.err) {
		t.Fatalf("the trail's error was %v, want it returned", err)
	}
	_ = w.Close()
	primary.err = nil
	if err := audit.Record(context.Background(), event("after-close", nil)); err != nil {
		t.Fatalf("a closed log failed a record the trail took: %v", err)
	}
	got := lines(t, buf.Bytes())
	if len(got) != 1 || got[0]["decision_id"] != "d-1" {
		t.Fatalf("log lines %v, want only d-1 (a refused decision is not logged)", got)
	}
	if !reflect.DeepEqual(primary.seen, []string{"d-1", "after-close"}) {
		t.Fatalf("trail %v", primary.seen)
	}
	if st := w.Stats(); st.Dropped != 1 {
		t.Fatalf("stats %+v, want the record after Close dropped", st)
	}
}

func TestTeeWithoutATrailOrALog(t *testing.T) {
	primary := &trail{}
	if got := decisionlog.Tee(primary, nil); got != pdp.AuditLog(primary) {
		t.Fatal("Tee without a log is not the trail itself")
	}
	var buf bytes.Buffer
	w := decisionlog.New(&buf, decisionlog.Options{})
	if err := decisionlog.Tee(nil, w).Record(context.Background(), event("d-1", nil)); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	if got := lines(t, buf.Bytes()); len(got) != 1 {
		t.Fatalf("%d lines, want 1", len(got))
	}
}

func TestAFullBufferGoesOutInWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.jsonl")
	w, err := decisionlog.Open(path, decisionlog.Options{FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	long := map[string]any{"content": strings.Repeat("y", decisionlog.BufferBytes)} // longer than the buffer
	for i := range 400 {
		args := map[string]any{"command": fmt.Sprintf("echo %d", i)}
		if i == 200 {
			args = long
		}
		if err := w.Record(context.Background(), event(fmt.Sprintf("d-%03d", i), args)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("%d bytes written before Close, not ending a line", len(b))
	}
	got := lines(t, b) // fails on a line cut short
	if len(got) < 200 {
		t.Fatalf("%d lines out before Close, want at least the 200 before the long one", len(got))
	}
}

func TestALineLeftUnfinishedIsEndedBeforeNewLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.jsonl")
	if err := os.WriteFile(path, []byte(`{"decision_id":"ok"}`+"\n"+`{"decision_id":"cut sh`), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := decisionlog.Open(path, decisionlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Record(context.Background(), event("d-1", nil))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(got) != 3 || got[1] != `{"decision_id":"cut sh` {
		t.Fatalf("lines %q, want the cut line kept on its own", got)
	}
	var e map[string]any
	if err := json.Unmarshal([]byte(got[2]), &e); err != nil || e["decision_id"] != "d-1" {
		t.Fatalf("the new line %q: %v", got[2], err)
	}
}

func TestTimestampsHaveOneShape(t *testing.T) {
	var buf bytes.Buffer
	w := decisionlog.New(&buf, decisionlog.Options{})
	ev := event("d-1", nil)
	ev.Time = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	_ = w.Record(context.Background(), ev)
	_ = w.Close()
	if got := lines(t, buf.Bytes())[0]["timestamp"]; got != "2026-03-01T12:00:00.000000000Z" {
		t.Fatalf("timestamp %v, want nine digits of fraction in UTC", got)
	}
}
