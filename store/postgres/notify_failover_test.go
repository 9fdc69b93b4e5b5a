package postgres_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolperm/pdp/adapters/notify"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/internal/pgtest"
	"github.com/toolperm/pdp/store/postgres"
)

// The environment of the replica the failover test runs as a child
// process: the database's URL and the receiver's.
const (
	replicaDBEnv       = "PDP_TEST_NOTIFY_REPLICA_DB"
	replicaReceiverEnv = "PDP_TEST_NOTIFY_REPLICA_RECEIVER"
)

// failoverSink is the sink both replicas send to: the same name, so they
// claim the same events.
func failoverSink(url string) notify.Sink {
	return notify.Sink{Name: "ops", Kind: notify.Webhook, URL: url, Secret: []byte("0123456789abcdef0123"),
		Events: []string{"ask"}, Timeout: 2 * time.Second, Backoff: time.Second}
}

// replicaNotifier starts notifications from store with claims, as
// pdp serve does on PostgreSQL.
func replicaNotifier(ctx context.Context, store *postgres.Store, claims notify.Claims, receiver string) (stop func(), err error) {
	hub, err := feed.New(ctx, store, feed.Options{})
	if err != nil {
		return nil, err
	}
	store.OnChange(hub.Changed)
	n, err := notify.New(notify.Options{Feed: hub, Claims: claims, Sinks: []notify.Sink{failoverSink(receiver)}})
	if err != nil {
		return nil, err
	}
	stopNotifier := n.Start(ctx)
	return func() { stopNotifier(); hub.Close() }, nil
}

// stallAfterClaim is the replica that dies between its claim and its
// delivery: once it wins a claim it says so and stalls until killed.
type stallAfterClaim struct{ *postgres.Store }

func (s stallAfterClaim) ClaimDelivery(ctx context.Context, sink string, seq int64, lease time.Duration) (bool, time.Time, error) {
	mine, until, err := s.Store.ClaimDelivery(ctx, sink, seq, lease)
	if mine {
		fmt.Printf("claimed %d\n", seq)
		select {}
	}
	return mine, until, err
}

// TestNotificationReplica is the replica TestANotificationOutlivesTheReplicaThatClaimedIt
// runs as a child process (this test binary again) and kills; run alone
// it skips.
func TestNotificationReplica(t *testing.T) {
	url := os.Getenv(replicaDBEnv)
	if url == "" {
		t.Skip("the child replica of TestANotificationOutlivesTheReplicaThatClaimedIt")
	}
	ctx := context.Background()
	store, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replicaNotifier(ctx, store, stallAfterClaim{store}, os.Getenv(replicaReceiverEnv)); err != nil {
		t.Fatal(err)
	}
	fmt.Println("ready")
	select {}
}

// afterSignal holds a replica's claims until ready is closed: the other
// replica claims first.
type afterSignal struct {
	*postgres.Store
	ready <-chan struct{}
}

func (s afterSignal) ClaimDelivery(ctx context.Context, sink string, seq int64, lease time.Duration) (bool, time.Time, error) {
	select {
	case <-s.ready:
	case <-ctx.Done():
		return false, time.Time{}, ctx.Err()
	}
	return s.Store.ClaimDelivery(ctx, sink, seq, lease)
}

// TestANotificationOutlivesTheReplicaThatClaimedIt: two replicas on one
// PostgreSQL database send one sink's events. One, a child process,
// claims an ask's notification and is killed (SIGKILL) before sending
// it; the other delivers it to the receiver once the dead one's lease
// has run out, with the same id.
func TestANotificationOutlivesTheReplicaThatClaimedIt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster and a replica process")
	}
	url := newDatabase(t, pgtest.Start(t))
	var mu sync.Mutex
	var got []notify.Event
	arrived := make(chan struct{}, 16)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev notify.Event
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
		arrived <- struct{}{}
	}))
	defer receiver.Close()
	b := open(t, url, postgres.Options{}) // migrated before the child opens it

	// The replica that will die: this test binary, run as it.
	cmd := exec.Command(os.Args[0], "-test.run=^TestNotificationReplica$", "-test.count=1")
	cmd.Env = append(os.Environ(), replicaDBEnv+"="+url, replicaReceiverEnv+"="+receiver.URL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	await := func(prefix string) string {
		t.Helper()
		guard := time.After(60 * time.Second) // bounds a failure only
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the replica ended before %q:\n%s", prefix, stderr.String())
				}
				if strings.HasPrefix(l, prefix) {
					return l
				}
			case <-guard:
				t.Fatalf("the replica did not say %q:\n%s", prefix, stderr.String())
			}
		}
	}
	await("ready")

	aClaimed := make(chan struct{})
	stop, err := replicaNotifier(t.Context(), b, afterSignal{b, aClaimed}, receiver.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	ctx := t.Context()
	if _, err := b.CreateSession(ctx, api.Session{ID: "s", PermissionLevel: api.ReadOnly, Mode: api.OnDemand, ExecutionMode: api.Local}); err != nil {
		t.Fatal(err)
	}
	ask := askEvent("s", "make release")
	if err := b.Record(ctx, ask); err != nil {
		t.Fatal(err)
	}
	var seq int64
	if _, err := fmt.Sscanf(await("claimed "), "claimed %d", &seq); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	close(aClaimed) // the living replica claims now: it loses to the dead one's lease

	select {
	case <-arrived:
	case <-time.After(60 * time.Second): // bounds a failure only
		t.Fatal("the event the killed replica had claimed never reached the receiver")
	}
	mu.Lock()
	defer mu.Unlock()
	var d api.Event
	if err := json.Unmarshal(got[0].Decision, &d); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Event != "ask" || got[0].ID != seq || d.DecisionID != ask.Decision.DecisionID {
		t.Fatalf("the receiver got %d events, the first %s %d of %s; want the ask %s, id %d", len(got), got[0].Event, got[0].ID, d.DecisionID, ask.Decision.DecisionID, seq)
	}
}
