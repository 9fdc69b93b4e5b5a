package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/testserver"
)

// The faults of docs/operations.md, "Faults", against real `pdp serve`
// processes on real SQLite files.

// fullSession creates a FULL session, where a plain read is allowed.
func fullSession(t *testing.T, url, id string) {
	t.Helper()
	body := fmt.Sprintf(`{"id":%q,"permission_level":"FULL","workspace":"/w"}`, id)
	if code := call(t, "POST", url+"/v1/sessions", body, nil); code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("creating session %s: %d", id, code)
	}
}

// answer is one response of the load: when its request was sent, its
// status and decision.
type answer struct {
	sent     time.Time
	status   int
	decision string
}

// load sends allowed reads from 8 clients until stop closes, and returns
// every answer.
func load(url, session string, stop <-chan struct{}) []answer {
	var mu sync.Mutex
	var all []answer
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 30 * time.Second}
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf(`{"session_id":%q,"tool":"read_file","args":{"path":"f%d-%d"},"cwd":"/w"}`, session, w, i)
				a := answer{sent: time.Now()}
				resp, err := client.Post(url+"/v1/decide", "application/json", bytes.NewBufferString(body))
				if err != nil {
					continue
				}
				var d api.Decision
				_ = json.NewDecoder(resp.Body).Decode(&d)
				resp.Body.Close()
				a.status, a.decision = resp.StatusCode, d.Decision
				mu.Lock()
				all = append(all, a)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return all
}

// readyStatus is GET /ready's status and how long it took.
func readyStatus(t *testing.T, url string) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	resp, err := http.Get(url + "/ready")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

// waitReady polls /ready until it answers want; within bounds only a
// machine that is not running the test at all.
func waitReady(t *testing.T, url string, want int) time.Time {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if code, _ := readyStatus(t, url); code == want {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("/ready is not %d after 30s", want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDatabaseFileDeletedOrReplaced: a database file moved away or
// deleted under load is detected; from then on every decision is a 503
// and /ready fails, until the file is back.
func TestDatabaseFileDeletedOrReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	for _, tc := range []struct {
		name   string
		remove func(db string) error
		back   func(db string) error // nil: it does not come back
	}{
		{"moved away and back", func(db string) error { return os.Rename(db, db+".moved") }, func(db string) error { return os.Rename(db+".moved", db) }},
		{"deleted", os.Remove, nil},
		{"replaced", func(db string) error {
			if err := os.WriteFile(db+".new", nil, 0o600); err != nil {
				return err
			}
			return os.Rename(db+".new", db)
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "pdp.db")
			_, url := startServer(t, db)
			fullSession(t, url, "f")
			stop := make(chan struct{})
			done := make(chan []answer)
			go func() { done <- load(url, "f", stop) }()
			waitReady(t, url, http.StatusOK)
			removed := time.Now()
			if err := tc.remove(db); err != nil {
				t.Fatal(err)
			}
			detected := waitReady(t, url, http.StatusServiceUnavailable)
			// Everything sent once /ready said so is refused.
			time.Sleep(50 * time.Millisecond) // let the load send after the detection
			close(stop)
			answers := <-done
			var allowedAfter, refusedAfter int
			for _, a := range answers {
				if !a.sent.After(detected) {
					continue
				}
				if a.status == http.StatusOK {
					allowedAfter++
				} else if a.status == http.StatusServiceUnavailable {
					refusedAfter++
				}
			}
			if allowedAfter > 0 {
				t.Fatalf("%d decisions answered 200 after the fault was detected", allowedAfter)
			}
			body := `{"session_id":"f","tool":"read_file","args":{"path":"x"},"cwd":"/w"}`
			if code := call(t, "POST", url+"/v1/decide", body, nil); code != http.StatusServiceUnavailable {
				t.Fatalf("a decision after the fault: %d, want 503", code)
			}
			t.Logf("%s: /ready failed %v after the file was %s (%d answers under load, %d refused after)", tc.name,
				detected.Sub(removed).Round(time.Millisecond), tc.name, len(answers), refusedAfter)
			if tc.back == nil {
				return
			}
			if err := tc.back(db); err != nil {
				t.Fatal(err)
			}
			waitReady(t, url, http.StatusOK)
			if code := call(t, "POST", url+"/v1/decide", body, nil); code != http.StatusOK {
				t.Fatalf("a decision once the file is back: %d, want 200", code)
			}
		})
	}
}

// TestSecondServeOnOneFileIsRefused: a second `pdp serve` on a SQLite
// file another serves exits with a message naming the other's pid; the
// maintenance commands still work beside it.
func TestSecondServeOnOneFileIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	db := filepath.Join(t.TempDir(), "pdp.db")
	first, url := startServer(t, db)
	fullSession(t, url, "s")
	decide(t, url, "s", "read_file", `{"path":"a"}`, "/w")
	second := serveProcess(db, repoConfig)
	var stderr bytes.Buffer
	second.Stderr = &stderr
	err := second.Run()
	if err == nil {
		t.Fatal("a second pdp serve on the same file started")
	}
	want := "in use by process " + strconv.Itoa(first.Process.Pid)
	if !strings.Contains(stderr.String(), want) {
		t.Fatalf("the refusal does not say %q:\n%s", want, stderr.String())
	}
	for _, args := range [][]string{{"audit", "stats"}, {"audit", "export"}, {"audit", "prune", "--before", "720h"}} {
		out, err := pdpProcess(append(args, "--db", db, "--config", repoConfig)).CombinedOutput()
		if err != nil {
			t.Fatalf("pdp %s beside a server: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	decide(t, url, "s", "read_file", `{"path":"b"}`, "/w")
}

// openExternal opens the database as another program would (the sqlite3
// shell): a connection of its own, not the server's.
func openExternal(t *testing.T, db string) *sql.DB {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+db+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	conn.SetMaxOpenConns(1)
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestWriteByAnotherConnectionReachesTheCache: a grant revoked and a
// level lowered by a writer the server does not know of apply to the
// very next decision.
func TestWriteByAnotherConnectionReachesTheCache(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	db := filepath.Join(t.TempDir(), "pdp.db")
	_, url := startServer(t, db)
	shell := `{"command":"make check"}`
	ask := decide(t, url, "g", "shell", shell, "/w")
	if ask.Decision != api.Ask {
		t.Fatalf("before the grant: %s", ask.Decision)
	}
	if code := call(t, "POST", url+"/v1/decisions/"+ask.DecisionID+"/answer", `{"answer":"allow_session","channel":"cli"}`, nil); code != http.StatusOK {
		t.Fatalf("answer: %d", code)
	}
	for range 2 { // the second is served from the cache
		if d := decide(t, url, "g", "shell", shell, "/w"); d.Decision != api.Allow {
			t.Fatalf("with the grant: %s (%s)", d.Decision, d.Reason)
		}
	}
	ext := openExternal(t, db)
	if _, err := ext.Exec(`DELETE FROM grants`); err != nil {
		t.Fatal(err)
	}
	if d := decide(t, url, "g", "shell", shell, "/w"); d.Decision == api.Allow {
		t.Fatalf("a grant deleted by another connection still allows: %+v", d)
	}
	fullSession(t, url, "l")
	for range 2 {
		if d := decide(t, url, "l", "write_file", `{"path":"a"}`, "/w"); d.Decision != api.Allow {
			t.Fatalf("at FULL: %s", d.Decision)
		}
	}
	if _, err := ext.Exec(`UPDATE sessions SET permission_level = 'READ_ONLY' WHERE id = 'l'`); err != nil {
		t.Fatal(err)
	}
	if d := decide(t, url, "l", "write_file", `{"path":"a"}`, "/w"); d.Decision == api.Allow {
		t.Fatalf("a level lowered by another connection still allows: %+v", d)
	}
}

// TestReadyUnderAHeldLock: while another connection holds the write lock,
// /ready answers at once, and says 503 once decisions cannot commit;
// decisions get their 503 within server.decision_timeout and are not in
// the trail; after the lock goes, both recover.
func TestReadyUnderAHeldLock(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "pdp.db")
	cfg := writeConfig(t, dir, "server:\n  decision_timeout: 1s\n")
	url := startCmd(t, serveProcess(db, cfg))
	fullSession(t, url, "h")
	decide(t, url, "h", "read_file", `{"path":"a"}`, "/w")
	ext := openExternal(t, db)
	conn, err := ext.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan []answer)
	go func() { done <- load(url, "h", stop) }()
	var slowest time.Duration
	var probes int
	for deadline := time.Now().Add(30 * time.Second); ; probes++ {
		code, took := readyStatus(t, url)
		slowest = max(slowest, took)
		if code == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/ready still 200 30s into a held lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for range 20 {
		_, took := readyStatus(t, url)
		slowest = max(slowest, took)
		probes++
	}
	close(stop)
	answers := <-done
	var allowed int
	var longest time.Duration
	for _, a := range answers {
		if a.status == http.StatusOK {
			allowed++
		}
	}
	for range 3 {
		start := time.Now()
		body := `{"session_id":"h","tool":"read_file","args":{"path":"held"},"cwd":"/w"}`
		if code := call(t, "POST", url+"/v1/decide", body, nil); code != http.StatusServiceUnavailable {
			t.Fatalf("a decision under the held lock: %d, want 503", code)
		}
		longest = max(longest, time.Since(start))
	}
	// The bound is the point here: generous, for a loaded machine.
	if slowest > time.Second {
		t.Fatalf("/ready took %v under a held lock", slowest)
	}
	if _, err := conn.ExecContext(context.Background(), `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	waitReady(t, url, http.StatusOK)
	decide(t, url, "h", "read_file", `{"path":"after"}`, "/w")
	var held int
	if err := conn.QueryRowContext(context.Background(), `SELECT count(*) FROM decisions WHERE args LIKE '%held%'`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if held != 0 {
		t.Fatalf("%d decisions answered 503 are in the trail", held)
	}
	t.Logf("held lock: %d /ready probes, slowest %v; a decision's 503 took at most %v (decision_timeout 1s); %d of %d answers under the lock were 200 (before the lock was seen)",
		probes, slowest.Round(time.Microsecond), longest.Round(time.Millisecond), allowed, len(answers))
}

// TestReadyOnAFullFileSystem: with the file size capped (RLIMIT_FSIZE,
// which fails writes as a full disk does), /ready turns 503 while
// decisions fail, and 200 again once the cap is lifted.
func TestReadyOnAFullFileSystem(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("needs prlimit (util-linux) to start pdp serve with RLIMIT_FSIZE")
	}
	db := filepath.Join(t.TempDir(), "pdp.db")
	serve := serveProcess(db, repoConfig)
	cmd := exec.Command(prlimit, append([]string{"--fsize=1048576:unlimited", "--", serve.Path}, serve.Args[1:]...)...)
	cmd.Env = serve.Env
	url, log := testserver.Process(t, cmd, 30*time.Second)
	fullSession(t, url, "d")
	var failed atomic.Int64
	stop := make(chan struct{})
	done := make(chan []answer)
	go func() { done <- load(url, "d", stop) }()
	waitReady(t, url, http.StatusServiceUnavailable)
	close(stop)
	answers := <-done
	for _, a := range answers {
		if a.status == http.StatusServiceUnavailable {
			failed.Add(1)
		} else if a.status != http.StatusOK {
			t.Fatalf("a decision on a full file system: %d", a.status)
		}
	}
	if failed.Load() == 0 {
		t.Fatalf("no decision failed, yet /ready is 503:\n%s", log)
	}
	if out, err := exec.Command(prlimit, "--pid", strconv.Itoa(cmd.Process.Pid), "--fsize=unlimited:unlimited").CombinedOutput(); err != nil {
		t.Fatalf("lifting the cap: %v\n%s", err, out)
	}
	waitReady(t, url, http.StatusOK)
	decide(t, url, "d", "read_file", `{"path":"after"}`, "/w")
	t.Logf("full file system: %d of %d decisions 503, /ready 503 while they failed, 200 once space returned", failed.Load(), len(answers))
}
