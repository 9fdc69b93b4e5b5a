package pdp_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/adapters/shell"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/sqlite"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func newDesk(t *testing.T, stopping <-chan struct{}) (*pdp.Desk, *sqlite.Store) {
	t.Helper()
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "pdp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	e := newEngine(t, pdp.Components{Audit: store, Shell: shell.Parser{}, Workspace: paths.Resolver{FollowSymlinks: true}})
	return pdp.NewDesk(e, store, pdp.DeskOptions{Stopping: stopping}), store
}

// TestTheDeskDecidesWaitsAndAnswers: what every front end does with a
// request, done once in the core — bad input refused before anything is
// written, an unknown session created, an ask held until a person
// answers, a wait that ends with the decision as it stands.
func TestTheDeskDecidesWaitsAndAnswers(t *testing.T) {
	stopping := make(chan struct{})
	desk, store := newDesk(t, stopping)
	ctx := context.Background()
	who := pdp.Caller{Name: "runtime"}
	ws := t.TempDir()

	if _, err := desk.Decide(ctx, api.DecideRequest{SessionID: "bad id!", Tool: "Bash"}, who, false); !errors.As(err, new(*pdp.Error)) {
		t.Fatalf("bad input: %v", err)
	}
	if _, err := store.GetSession(ctx, "bad id!"); !errors.Is(err, pdp.ErrNotFound) {
		t.Fatalf("bad input created a session: %v", err)
	}

	ask := func() api.Decision {
		d, err := desk.Decide(ctx, api.DecideRequest{SessionID: "s1", Tool: "Bash", Args: map[string]any{"command": "make check"}, Cwd: ws}, who, false)
		if err != nil || d.Decision != api.Ask {
			t.Fatalf("%+v %v", d, err)
		}
		return d
	}
	d := ask()
	if s, err := store.GetSession(ctx, "s1"); err != nil || s.Owner != "runtime" || s.Workspace != ws {
		t.Fatalf("the session the desk created: %+v %v", s, err)
	}

	// A person answers while the runtime waits: the answer is given once
	// the wait has parked (the desk's own state, not a sleep).
	var ended string
	park := func() func(string) { return func(r string) { ended = r } }
	parked := make(chan struct{})
	answerOnPark := func() func(string) {
		close(parked)
		return func(r string) { ended = r }
	}
	answered := make(chan error, 1)
	go func() {
		<-parked
		_, err := desk.Answer(ctx, d.DecisionID, api.AllowOnce, "console", api.Answerer{Name: "person"})
		answered <- err
	}()
	rec, err := desk.Await(ctx, d.DecisionID, 30*time.Second, nil, answerOnPark)
	if aerr := <-answered; aerr != nil {
		t.Fatal(aerr)
	}
	if err != nil || rec.Answer == nil || rec.Answer.Answer != api.AllowOnce || ended != pdp.WaitAnswered {
		t.Fatalf("answered: %+v %v (%s)", rec.Answer, err, ended)
	}

	// Nobody answers: the wait ends with the ask as it stands.
	d = ask()
	rec, err = desk.Await(ctx, d.DecisionID, 100*time.Millisecond, nil, park)
	if err != nil || rec.Answer != nil || rec.Decision.Decision != api.Ask || ended != pdp.WaitTimeout {
		t.Fatalf("timeout: %+v %v (%s)", rec, err, ended)
	}

	// The caller may be refused before anything waits.
	refused := errors.New("not yours")
	if _, err := desk.Await(ctx, d.DecisionID, time.Hour, func(api.Event) error { return refused }, park); !errors.Is(err, refused) {
		t.Fatalf("check: %v", err)
	}

	// Bad answers change nothing.
	if _, err := desk.Answer(ctx, d.DecisionID, "yes", "console", api.Answerer{Name: "person"}); !errors.As(err, new(*pdp.Error)) {
		t.Fatalf("answer yes: %v", err)
	}

	// Stopping ends every wait at once.
	close(stopping)
	start := time.Now()
	rec, err = desk.Await(ctx, d.DecisionID, time.Hour, nil, park)
	if err != nil || rec.Answer != nil || ended != pdp.WaitStopping || time.Since(start) > 10*time.Second {
		t.Fatalf("stopping: %+v %v (%s)", rec, err, ended)
	}
}

// TestARequestIsValidatedOnce: a decision at the desk validates its
// request once, reads its session once and decides once (one span of
// each; the engine's path from the desk has no validation of its own).
func TestARequestIsValidatedOnce(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("test")
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "pdp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	e := newEngine(t, pdp.Components{Audit: store, Shell: shell.Parser{}, Workspace: paths.Resolver{FollowSymlinks: true}, Tracer: tracer})
	desk := pdp.NewDesk(e, store, pdp.DeskOptions{})
	if _, err := desk.Decide(context.Background(), api.DecideRequest{SessionID: "s1", Tool: "Read", Args: map[string]any{"file_path": "/w/a"}, Cwd: "/w"}, pdp.Caller{}, false); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, s := range rec.Ended() {
		count[s.Name()]++
	}
	if count[pdp.SpanValidate] != 1 || count[pdp.SpanSessionRead] != 1 || count[pdp.SpanDecide] != 1 {
		t.Fatalf("spans of one decision: %v", count)
	}
}
