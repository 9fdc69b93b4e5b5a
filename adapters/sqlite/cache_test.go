package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/toolperm/pdp/pdp"
)

func newSession(id, parent, workspace string) pdp.StoredSession {
	return pdp.StoredSession{ID: id, ParentSessionID: parent, Workspace: workspace,
		PermissionLevel: pdp.ReadOnly, Mode: pdp.OnDemand, ExecutionMode: pdp.Local}
}

// A cached session tree stays cached while other sessions are created —
// agents start sessions all the time — and is read again after any
// change to a session it holds: a level, a workspace claimed.
func TestSessionTreesStayWarmWhileSessionsAreCreated(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "pdp.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, rec := range []pdp.StoredSession{newSession("root", "", ""), newSession("child", "root", "")} {
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
	if err := s.ClaimWorkspace(ctx, "other", "/elsewhere"); err != nil { // has one: no change
		t.Fatal(err)
	}
	if again, err := s.SessionTree(ctx, "child"); err != nil || again != first {
		t.Fatalf("after other sessions were created the tree was read again (%v)", err)
	}

	level := pdp.ReadWrite
	if _, err := s.UpdateSession(ctx, "root", pdp.SessionPatch{PermissionLevel: &level}); err != nil {
		t.Fatal(err)
	}
	tree, err := s.SessionTree(ctx, "child")
	if err != nil || tree.Parent == nil || tree.Parent.PermissionLevel != pdp.ReadWrite {
		t.Fatalf("after the root's level changed: %+v, %v", tree, err)
	}
	if err := s.ClaimWorkspace(ctx, "root", "/w"); err != nil {
		t.Fatal(err)
	}
	if tree, err = s.SessionTree(ctx, "child"); err != nil || tree.Parent.Workspace != "/w" {
		t.Fatalf("after the root claimed a workspace: %+v, %v", tree, err)
	}
}
