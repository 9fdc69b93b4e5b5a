package httpapi

import (
	"errors"
	"net/http"
	"path/filepath"

	"github.com/labstack/echo/v4"
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
	session, err := s.sessionFor(c, req)
	if err != nil {
		return err
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

// sessionFor loads the session a decision runs in, creating an unknown
// one, and checks that the caller may use it before anything of the
// request is written to it: a refused request changes nothing.
func (s *Server) sessionFor(c echo.Context, req pdp.Request) (*pdp.Session, error) {
	ctx := c.Request().Context()
	session, err := s.cfg.Store.SessionTree(ctx, req.SessionID)
	if errors.Is(err, pdp.ErrNotFound) {
		session, err = s.createForDecide(c, req)
	}
	if err != nil {
		return nil, storeUnavailable(err)
	}
	// A dispatcher decides only in its own sessions (and ones no single
	// dispatcher owns): another runtime's session may have been raised
	// for that runtime.
	if foreign, ok := callerOf(c).mayUseTree(session); !ok {
		return nil, s.forbid(c, "another dispatcher's session", "session %q belongs to another dispatcher", foreign.ID)
	}
	if session.Workspace == "" && session.Parent == nil && filepath.IsAbs(req.Cwd) {
		// A session created before any absolute cwd was known confines
		// nothing (every path is outside) until it adopts its first one.
		if err := s.cfg.Store.ClaimWorkspace(ctx, req.SessionID, filepath.Clean(req.Cwd)); err != nil {
			return nil, storeUnavailable(err)
		}
		if session, err = s.cfg.Store.SessionTree(ctx, req.SessionID); err != nil {
			return nil, storeUnavailable(err)
		}
	}
	return session, nil
}

// createForDecide creates an unknown session with the configured
// defaults, owned by the caller, with the request's absolute cwd as its
// workspace. Another request may create it first; then that one's
// session is returned, for the caller's ownership to be checked.
func (s *Server) createForDecide(c echo.Context, req pdp.Request) (*pdp.Session, error) {
	ctx := c.Request().Context()
	cwd := ""
	if filepath.IsAbs(req.Cwd) {
		cwd = filepath.Clean(req.Cwd)
	}
	_, err := s.cfg.Store.EnsureSession(ctx, pdp.StoredSession{
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
	return s.cfg.Store.SessionTree(ctx, req.SessionID)
}

// storeUnavailable: without the session there is no decision, and no allow.
func storeUnavailable(err error) error {
	if errors.Is(err, pdp.ErrNotFound) {
		return err
	}
	return fail(http.StatusServiceUnavailable, "store_unavailable", "the session store is unavailable: %v", err)
}
