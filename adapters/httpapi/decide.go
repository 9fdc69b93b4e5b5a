package httpapi

import (
	"errors"
	"net/http"
	"path/filepath"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/adapters/sqlite"
	"github.com/toolperm/pdp/pdp"
)

// decide answers POST /v1/decide. An unknown session id creates a session
// with the configured defaults and the request's cwd as its workspace.
// The answer is sent only after its audit event is committed.
func (s *Server) decide(c echo.Context) error {
	var req pdp.Request
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if err := pdp.ValidateRequest(req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	session, err := s.cfg.Store.SessionTree(ctx, req.SessionID)
	if errors.Is(err, sqlite.ErrNotFound) || (err == nil && session.Workspace == "" && session.Parent == nil && filepath.IsAbs(req.Cwd)) {
		session, err = s.adoptSession(c, req)
	}
	if err != nil {
		return storeUnavailable(err)
	}
	// A dispatcher decides only in its own sessions (and ones no single
	// dispatcher owns): another runtime's session may have been raised
	// for that runtime.
	for cur := session; cur != nil; cur = cur.Parent {
		if !callerOf(c).mayUse(cur.Owner) {
			return fail(http.StatusForbidden, "forbidden", "session %q belongs to another dispatcher", cur.ID)
		}
	}
	d, err := s.cfg.Engine.Decide(ctx, pdp.Call{Request: req, Session: session, Explain: c.QueryParam("explain") == "1"})
	if d.DecisionID != "" {
		c.Set(decisionIDKey, d.DecisionID)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

// adoptSession creates an unknown session with the configured defaults,
// or gives a session without a workspace its first absolute cwd: an
// auto-created session's workspace is the first absolute cwd it is asked
// about, and until it has one it confines nothing (every path is outside).
func (s *Server) adoptSession(c echo.Context, req pdp.Request) (*pdp.Session, error) {
	ctx := c.Request().Context()
	cwd := ""
	if filepath.IsAbs(req.Cwd) {
		cwd = filepath.Clean(req.Cwd)
	}
	rec, err := s.cfg.Store.EnsureSession(ctx, sqlite.SessionRecord{
		Owner:           callerOf(c).owner(),
		ID:              req.SessionID,
		PermissionLevel: s.cfg.DefaultLevel,
		Mode:            s.cfg.DefaultMode,
		ExecutionMode:   pdp.Local,
		Workspace:       cwd,
	})
	if err != nil {
		return nil, err
	}
	if rec.Workspace == "" && cwd != "" && rec.ParentSessionID == "" {
		if err := s.cfg.Store.ClaimWorkspace(ctx, req.SessionID, cwd); err != nil {
			return nil, err
		}
	}
	return s.cfg.Store.SessionTree(ctx, req.SessionID)
}

// storeUnavailable: without the session there is no decision, and no allow.
func storeUnavailable(err error) error {
	if errors.Is(err, sqlite.ErrNotFound) {
		return err
	}
	return fail(http.StatusServiceUnavailable, "store_unavailable", "the session store is unavailable: %v", err)
}
