package sqlite

import (
	"sync"
	"testing"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

func newSession(id, parent, workspace string) api.Session {
	return api.Session{ID: id, ParentSessionID: parent, Workspace: workspace,
		PermissionLevel: api.ReadOnly, Mode: api.OnDemand, ExecutionMode: api.Local}
}

// A cached session tree stays cached while other sessions are created —
// agents start sessions all the time — and is read again after any
// change to a session it holds: a level, a workspace claimed.
func TestSessionTreesStayWarmWhileSessionsAreCreated(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t, Options{})
	for _, rec := range []api.Session{newSession("root", "", ""), newSession("child", "root", "")} {
		if _, err := s.CreateSession(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	first, err := s.SessionTree(ctx, "child")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSession(ctx, newSession("other", "", "/w")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSession(ctx, newSession("sibling", "root", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnsureSession(ctx, newSession("ensured", "", "/w")); err != nil {
		t.Fatal(err)
	}
	if again, err := s.SessionTree(ctx, "child"); err != nil || again != first {
		t.Fatalf("after other sessions were created the tree was read again (%v)", err)
	}

	level := api.ReadWrite
	if _, err := s.UpdateSession(ctx, "root", pdp.SessionPatch{PermissionLevel: &level}); err != nil {
		t.Fatal(err)
	}
	tree, err := s.SessionTree(ctx, "child")
	if err != nil || tree.Parent == nil || tree.Parent.PermissionLevel != api.ReadWrite {
		t.Fatalf("after the root's level changed: %+v, %v", tree, err)
	}
	if err := s.ClaimWorkspace(ctx, "root", "/w"); err != nil {
		t.Fatal(err)
	}
	if tree, err = s.SessionTree(ctx, "child"); err != nil || tree.Parent.Workspace != "/w" {
		t.Fatalf("after the root claimed a workspace: %+v, %v", tree, err)
	}
}

// A claim that lost to another caller's changes no row, but that caller
// may have committed without telling the cache yet: the tree the loser's
// Resolve reads next must hold the workspace the database has, not the
// empty one cached before (a stale empty workspace lets workspace-anchored
// path denies miss).
func TestResolveAfterLosingAClaimReadsTheClaimedWorkspace(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t, Options{})
	if _, err := s.EnsureSession(ctx, newSession("x", "", "")); err != nil {
		t.Fatal(err)
	}
	if tree, err := s.SessionTree(ctx, "x"); err != nil || tree.Workspace != "" {
		t.Fatalf("warm-up: %+v %v", tree, err)
	}
	// The winner's claim commits, then stops before telling the cache.
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.shared.Changed = func() {
		first := false
		once.Do(func() { first = true })
		if first {
			close(entered)
			<-release
		}
		s.trees.invalidate()
	}
	done := make(chan error, 1)
	go func() { done <- s.ClaimWorkspace(ctx, "x", "/w1") }()
	<-entered

	sessions := pdp.Sessions{Store: s}
	tree, err := sessions.Resolve(ctx, api.DecideRequest{SessionID: "x", Cwd: "/w2"}, pdp.Caller{Person: true})
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	stored, err := s.GetSession(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if tree.Workspace != stored.Workspace || stored.Workspace != "/w1" {
		t.Fatalf("Resolve after its claim lost returned workspace %q; the database has %q", tree.Workspace, stored.Workspace)
	}
}
