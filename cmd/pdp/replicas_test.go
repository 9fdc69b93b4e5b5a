package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/pgtest"
	"github.com/toolperm/pdp/store/postgres"
)

// replica is one `pdp serve` process on a shared PostgreSQL database.
type replica struct {
	cmd *exec.Cmd
	url string
	log string // its decision log
}

// startReplica runs `pdp serve` on db with a decision log of its own.
func startReplica(t *testing.T, db, name string) *replica {
	t.Helper()
	dir := t.TempDir()
	r := &replica{log: filepath.Join(dir, "decisions.jsonl")}
	cfg := writeConfig(t, dir, fmt.Sprintf("decision_log:\n  path: %s\n  replica_id: %s\naudit:\n  retention: 0s\n", r.log, name))
	r.cmd = serveProcess(db, cfg)
	r.url = startCmd(t, r.cmd)
	return r
}

// stop stops the replica gracefully and waits for it.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("pdp serve exited with %v after SIGTERM", err)
	}
}

// call sends a JSON request and decodes the answer into out (when not
// nil); it returns the status.
func call(t *testing.T, method, url, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode < 300 {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
	}
	return resp.StatusCode
}

func decide(t *testing.T, url, session, tool, args, cwd string) api.Decision {
	t.Helper()
	var d api.Decision
	body := fmt.Sprintf(`{"session_id":%q,"tool":%q,"args":%s,"cwd":%q}`, session, tool, args, cwd)
	if code := call(t, "POST", url+"/v1/decide", body, &d); code != http.StatusOK {
		t.Fatalf("decide on %s: %d", url, code)
	}
	return d
}

// TestReplicasOnPostgreSQL runs two `pdp serve` processes on one
// PostgreSQL database and checks that they behave as one decision point.
func TestReplicasOnPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster and server processes")
	}
	db := pgtest.Start(t)
	a, b := startReplica(t, db, "a"), startReplica(t, db, "b")
	work := t.TempDir()
	askArgs := `{"command":"make release"}`

	t.Run("a level switch on one applies to the next decision on the other", func(t *testing.T) {
		if code := call(t, "POST", a.url+"/v1/sessions", fmt.Sprintf(`{"id":"lv","workspace":%q}`, work), nil); code != http.StatusCreated && code != http.StatusOK {
			t.Fatalf("creating the session on a: %d", code)
		}
		write := fmt.Sprintf(`{"path":%q,"content":"x"}`, filepath.Join(work, "f.txt"))
		if d := decide(t, b.url, "lv", "write_file", write, work); d.Decision == api.Allow {
			t.Fatalf("READ_ONLY allowed a write on b: %+v", d)
		}
		if code := call(t, "PATCH", a.url+"/v1/sessions/lv", `{"permission_level":"FULL"}`, nil); code != http.StatusOK {
			t.Fatalf("level switch on a: %d", code)
		}
		if d := decide(t, b.url, "lv", "write_file", write, work); d.Decision != api.Allow {
			t.Fatalf("the next decision on b after FULL on a: %+v", d)
		}
	})

	t.Run("an answer on one wakes a wait on the other within a second", func(t *testing.T) {
		d := decide(t, a.url, "waits", "shell", askArgs, work)
		if d.Decision != api.Ask {
			t.Fatalf("want an ask, got %+v", d)
		}
		woke := make(chan time.Time, 1)
		var waited api.Event
		go func() {
			call(t, "GET", a.url+"/v1/decisions/"+d.DecisionID+"?wait=20s", "", &waited)
			woke <- time.Now()
		}()
		time.Sleep(500 * time.Millisecond) // parked
		if code := call(t, "POST", b.url+"/v1/decisions/"+d.DecisionID+"/answer", `{"answer":"allow_once","channel":"console"}`, nil); code != http.StatusOK {
			t.Fatalf("answer on b: %d", code)
		}
		answered := time.Now()
		select {
		case at := <-woke:
			if waited.Answer == nil || waited.Answer.Answer != api.AllowOnce {
				t.Fatalf("the wait on a returned %+v", waited)
			}
			t.Logf("the wait on a woke %s after the answer on b", at.Sub(answered).Round(time.Millisecond))
		case <-time.After(time.Second):
			t.Fatal("the wait on a did not wake within a second of the answer on b")
		}
	})

	t.Run("two answers at once on two replicas: one 200, one 409", func(t *testing.T) {
		for round := range 5 {
			d := decide(t, a.url, "race", "shell", askArgs, work)
			codes := make(chan int, 2)
			var wg sync.WaitGroup
			for i, r := range []*replica{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					answer := []string{"allow_once", "deny"}[i]
					codes <- call(t, "POST", r.url+"/v1/decisions/"+d.DecisionID+"/answer", fmt.Sprintf(`{"answer":%q}`, answer), nil)
				}()
			}
			wg.Wait()
			close(codes)
			got := map[int]int{}
			for c := range codes {
				got[c]++
			}
			if got[http.StatusOK] != 1 || got[http.StatusConflict] != 1 {
				t.Fatalf("round %d: answers got %v, want one 200 and one 409", round, got)
			}
		}
	})

	t.Run("the inbox of one lists the asks made on the other", func(t *testing.T) {
		d := decide(t, b.url, "inbox", "shell", askArgs, work)
		var page struct {
			Decisions []api.Event `json:"decisions"`
		}
		if code := call(t, "GET", a.url+"/v1/decisions?decision=ask&session_id=inbox", "", &page); code != http.StatusOK {
			t.Fatalf("listing on a: %d", code)
		}
		if len(page.Decisions) != 1 || page.Decisions[0].DecisionID != d.DecisionID {
			t.Fatalf("a's inbox = %+v, want b's ask %s", page.Decisions, d.DecisionID)
		}
	})

	t.Run("the live feed of one carries the asks and answers made on the other", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", a.url+"/v1/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /v1/events on a: %d", resp.StatusCode)
		}
		lines := make(chan string, 64)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		time.Sleep(300 * time.Millisecond) // subscribed
		d := decide(t, b.url, "feed", "shell", askArgs, work)
		expect := func(event string) {
			t.Helper()
			deadline := time.After(time.Second)
			kind := ""
			for {
				select {
				case line, ok := <-lines:
					if !ok {
						t.Fatalf("the stream ended before the %s of %s", event, d.DecisionID)
					}
					if k, found := bytes.CutPrefix([]byte(line), []byte("event: ")); found {
						kind = string(k)
					}
					if kind == event && bytes.Contains([]byte(line), []byte(d.DecisionID)) {
						return
					}
				case <-deadline:
					t.Fatalf("a's feed did not carry the %s of %s made on b within a second", event, d.DecisionID)
				}
			}
		}
		expect("ask")
		if code := call(t, "POST", b.url+"/v1/decisions/"+d.DecisionID+"/answer", `{"answer":"deny"}`, nil); code != http.StatusOK {
			t.Fatalf("answer on b: %d", code)
		}
		expect("answer")
	})

	t.Run("the decision logs hold one line per decision made", func(t *testing.T) {
		for i := range 20 {
			decide(t, []*replica{a, b}[i%2].url, "logged", "read_file", fmt.Sprintf(`{"path":"f%d"}`, i), work)
		}
		a.stop(t)
		b.stop(t)
		lines := countLines(t, a.log) + countLines(t, b.log)
		made := countDecisions(t, db)
		if lines != made {
			t.Fatalf("%d decision-log lines for %d decisions in the trail", lines, made)
		}
		t.Logf("%d decisions, %d log lines", made, lines)
	})
}

// TestReplicaKilledUnderLoad: SIGKILL one of two replicas while both
// decide; every decision either answered is in the trail read from the
// survivor.
func TestReplicaKilledUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster and server processes")
	}
	db := pgtest.Start(t)
	a, b := startReplica(t, db, "a"), startReplica(t, db, "b")
	stopA, stopB := make(chan struct{}), make(chan struct{})
	doneA, doneB := make(chan []string), make(chan []string)
	var countA, countB atomic.Int64
	go func() { doneA <- hammer(a.url, stopA, &countA) }()
	go func() { doneB <- hammer(b.url, stopB, &countB) }()
	// Until each replica has answered enough (at most a minute: a slow
	// machine or the race detector answers fewer a second).
	for deadline := time.Now().Add(time.Minute); (countA.Load() < 50 || countB.Load() < 50) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	close(stopA)
	close(stopB)
	answered := append(<-doneA, <-doneB...)
	if len(answered) < 50 {
		t.Fatalf("only %d decisions answered; the test proves nothing", len(answered))
	}
	var missing []string
	for _, id := range answered {
		if code := call(t, "GET", b.url+"/v1/decisions/"+id, "", nil); code != http.StatusOK {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d of %d answered decisions are not in the trail read from the survivor, e.g. %s", len(missing), len(answered), missing[0])
	}
	t.Logf("%d decisions answered by two replicas, one killed: all in the trail", len(answered))
}

// TestServeDuringPostgreSQLOutage: with the database down a decision is a
// 503 (and /ready fails), nothing is answered unrecorded; once it is back
// the same process decides again.
func TestServeDuringPostgreSQLOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster and a server process")
	}
	cluster := pgtest.StartCluster(t)
	r := startReplica(t, cluster.URL, "a")
	body := `{"session_id":"o","tool":"read_file","args":{"path":"a"},"cwd":"/w"}`
	var d api.Decision
	if code := call(t, "POST", r.url+"/v1/decide", body, &d); code != http.StatusOK {
		t.Fatalf("before the outage: %d", code)
	}
	cluster.Stop(t)
	for range 3 {
		if code := call(t, "POST", r.url+"/v1/decide", body, nil); code != http.StatusServiceUnavailable {
			t.Fatalf("during the outage: %d, want 503", code)
		}
	}
	if code := call(t, "GET", r.url+"/ready", "", nil); code == http.StatusOK {
		t.Fatal("/ready is 200 during the outage")
	}
	cluster.Restart(t)
	deadline := time.Now().Add(15 * time.Second)
	for {
		code := call(t, "POST", r.url+"/v1/decide", body, &d)
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d 15s after the database came back", code)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code := call(t, "GET", r.url+"/v1/decisions/"+d.DecisionID, "", nil); code != http.StatusOK {
		t.Fatalf("the decision after the outage is not in the trail: %d", code)
	}
}

// TestTrailCommandsOnPostgreSQL: pdp replay, audit export and audit prune
// take a postgres:// URL as --db; stats and vacuum say they need a file.
func TestTrailCommandsOnPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster and a server process")
	}
	db := pgtest.Start(t)
	r := startReplica(t, db, "a")
	for i := range 5 {
		decide(t, r.url, "cli", "read_file", fmt.Sprintf(`{"path":"f%d"}`, i), "/w")
	}
	r.stop(t)
	pdpRun := func(args ...string) (string, error) {
		out, err := pdpProcess(append(args, "--db", db, "--config", repoConfig)).CombinedOutput()
		return string(out), err
	}
	out, err := pdpRun("replay", "--policies", filepath.Join("..", "..", "policies"))
	if err != nil || !bytes.Contains([]byte(out), []byte("5 replayed")) {
		t.Fatalf("pdp replay: %v\n%s", err, out)
	}
	out, err = pdpRun("audit", "export")
	if err != nil || bytes.Count([]byte(out), []byte(`{"labels"`)) != 5 {
		t.Fatalf("pdp audit export: %v\n%s", err, out)
	}
	if out, err = pdpRun("audit", "stats"); err == nil || !bytes.Contains([]byte(out), []byte("works on a SQLite file")) {
		t.Fatalf("pdp audit stats on PostgreSQL: %v\n%s", err, out)
	}
	if out, err = pdpRun("audit", "prune", "--before", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)); err != nil || !bytes.Contains([]byte(out), []byte("deleted 5 events")) {
		t.Fatalf("pdp audit prune: %v\n%s", err, out)
	}
	if n := countDecisions(t, db); n != 0 {
		t.Fatalf("%d events left after pruning them all", n)
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		n++
	}
	return n
}

func countDecisions(t *testing.T, db string) int {
	t.Helper()
	store, err := postgres.Open(context.Background(), db, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	n := 0
	if err := store.EachDecision(context.Background(), time.Time{}, func(api.Event) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}
