package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

func (s *Server) createSession(c echo.Context) error {
	var b api.NewSession
	if err := decodeJSON(c, &b); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if b.ID == "" {
		b.ID = newSessionID()
	}
	if !pdp.ValidSessionID(b.ID) {
		return fail(http.StatusBadRequest, "invalid_session_id", "id must be 1-128 characters of [A-Za-z0-9._:-]")
	}
	if b.ParentSessionID != "" {
		parent, err := s.cfg.Store.SessionTree(ctx, b.ParentSessionID)
		if errors.Is(err, pdp.ErrNotFound) {
			return fail(http.StatusBadRequest, "parent_not_found", "parent session %q does not exist", b.ParentSessionID)
		} else if err != nil {
			return storeUnavailable(err)
		}
		if foreign, ok := callerOf(c).mayUseTree(parent); !ok {
			return s.forbid(c, "parent in another dispatcher's session", "parent session %q belongs to another dispatcher", foreign.ID)
		}
		if depth := chainDepth(parent) + 1; depth > MaxSubAgentDepth {
			return fail(http.StatusBadRequest, "chain_too_deep", "a sub-agent may be at most %d levels below its root session; under %q it would be %d", MaxSubAgentDepth, b.ParentSessionID, depth)
		}
		// A sub-agent runs where its parent runs, in its workspace, unless told otherwise.
		if b.Workspace == "" {
			b.Workspace = parent.Workspace
		}
		if b.ExecutionMode == "" {
			b.ExecutionMode = parent.ExecutionMode
		}
	}
	if b.PermissionLevel == "" {
		b.PermissionLevel = s.cfg.DefaultLevel
	}
	if b.Mode == "" {
		b.Mode = s.cfg.DefaultMode
	}
	if b.ExecutionMode == "" {
		b.ExecutionMode = pdp.Local
	}
	if len(b.AssessorModel) > 200 {
		return fail(http.StatusBadRequest, "invalid_assessor_model", "assessor_model is longer than 200 characters")
	}
	if b.Workspace != "" && !filepath.IsAbs(b.Workspace) {
		return fail(http.StatusBadRequest, "invalid_workspace", "workspace must be an absolute path, got %q", b.Workspace)
	}
	if b.Rules == nil {
		b.Rules = map[string]string{}
	}
	if err := pdp.ValidateSession(&pdp.Session{PermissionLevel: b.PermissionLevel, Mode: b.Mode, ExecutionMode: b.ExecutionMode, Rules: b.Rules, Scope: b.Scope}); err != nil {
		return err
	}
	if who := callerOf(c); !who.has(User) {
		if err := s.dispatcherMayCreate(c, b.PermissionLevel, b.Mode, b.Rules, b.AssessorModel); err != nil {
			return err
		}
	}
	rec, err := s.cfg.Store.CreateSession(ctx, pdp.StoredSession{
		Owner: callerOf(c).owner(),
		ID:    b.ID, PermissionLevel: b.PermissionLevel, Mode: b.Mode, ExecutionMode: b.ExecutionMode,
		Workspace: b.Workspace, Rules: b.Rules, ParentSessionID: b.ParentSessionID, Scope: b.Scope, AssessorModel: b.AssessorModel,
	})
	if err != nil {
		if errors.Is(err, pdp.ErrExists) {
			return err
		}
		return storeUnavailable(err)
	}
	return c.JSON(http.StatusCreated, rec)
}

// MaxSubAgentDepth is how many levels of sub-agents a session tree may
// have below its root: deeper chains are refused at creation (400
// chain_too_deep), so every session that exists can be decided in.
const MaxSubAgentDepth = 15

// chainDepth is how many parents a session has.
func chainDepth(s *pdp.Session) int {
	n := 0
	for cur := s.Parent; cur != nil; cur = cur.Parent {
		n++
	}
	return n
}

func (s *Server) getSession(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	rec, err := s.cfg.Store.GetSession(ctx, id)
	if err != nil {
		return storeUnavailable(err)
	}
	if err := s.mayRead(c, id, fmt.Errorf("session %q: %w", id, pdp.ErrNotFound)); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rec)
}

// mayRead lets a dispatcher read a session, or a decision made in it,
// only when it may use the session's whole tree; anything else answers
// notFound, the same answer as an unknown id.
func (s *Server) mayRead(c echo.Context, sessionID string, notFound error) error {
	who := callerOf(c)
	if who.readsAll() {
		return nil
	}
	tree, err := s.cfg.Store.SessionTree(c.Request().Context(), sessionID)
	if errors.Is(err, pdp.ErrNotFound) {
		return s.hide(c, "session gone", notFound)
	} else if err != nil {
		return storeUnavailable(err)
	}
	if _, ok := who.mayUseTree(tree); !ok {
		return s.hide(c, "another dispatcher's session", notFound)
	}
	return nil
}

// patchableFields are the only fields PATCH may change; the rest are
// fixed at creation.
var patchableFields = []string{"permission_level", "mode", "rules"}

func (s *Server) patchSession(c echo.Context) error {
	var raw map[string]json.RawMessage
	if err := decodeJSON(c, &raw); err != nil {
		return err
	}
	var patch pdp.SessionPatch
	for key, value := range raw {
		if !slices.Contains(patchableFields, key) {
			return fail(http.StatusBadRequest, "field_fixed", "%q cannot be changed; PATCH takes permission_level, mode and rules", key)
		}
		var err error
		switch key {
		case "permission_level":
			patch.PermissionLevel = new(pdp.Level)
			err = json.Unmarshal(value, patch.PermissionLevel)
		case "mode":
			patch.Mode = new(pdp.Mode)
			err = json.Unmarshal(value, patch.Mode)
		case "rules":
			patch.RulesSet = true
			err = json.Unmarshal(value, &patch.Rules)
		}
		if err != nil {
			return fail(http.StatusBadRequest, "invalid_json", "%s: %v", key, err)
		}
	}
	check := &pdp.Session{Rules: patch.Rules}
	if patch.PermissionLevel != nil {
		if *patch.PermissionLevel == "" {
			return fail(http.StatusBadRequest, "invalid_level", "permission_level must be one of READ_ONLY, READ_WRITE, SMART, FULL")
		}
		check.PermissionLevel = *patch.PermissionLevel
	}
	if patch.Mode != nil {
		if *patch.Mode == "" {
			return fail(http.StatusBadRequest, "invalid_mode", "mode must be one of always-ask, on-demand, allow-all")
		}
		check.Mode = *patch.Mode
	}
	if err := pdp.ValidateSession(check); err != nil {
		return err
	}
	rec, err := s.cfg.Store.UpdateSession(c.Request().Context(), c.Param("id"), patch)
	if err != nil {
		return storeUnavailable(err)
	}
	return c.JSON(http.StatusOK, rec)
}

// listGrants lists the grants that apply to a session: those stored on
// the root of its tree.
func (s *Server) listGrants(c echo.Context) error {
	ctx := c.Request().Context()
	root, err := s.cfg.Store.RootID(ctx, c.Param("id"))
	if err != nil {
		return storeUnavailable(err)
	}
	grants, err := s.cfg.Store.Grants(ctx, root)
	if err != nil {
		return storeUnavailable(err)
	}
	if grants == nil {
		grants = []pdp.StoredGrant{}
	}
	return c.JSON(http.StatusOK, map[string]any{"grants": grants})
}

func (s *Server) deleteGrant(c echo.Context) error {
	gid, err := strconv.ParseInt(c.Param("gid"), 10, 64)
	if err != nil {
		return fail(http.StatusBadRequest, "invalid_grant_id", "grant id must be a number")
	}
	ctx := c.Request().Context()
	root, err := s.cfg.Store.RootID(ctx, c.Param("id"))
	if err != nil {
		return storeUnavailable(err)
	}
	if err := s.cfg.Store.DeleteGrant(ctx, root, gid); err != nil {
		return storeUnavailable(err)
	}
	return c.NoContent(http.StatusNoContent)
}

func newSessionID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "s-" + hex.EncodeToString(b[:])
}

// listSessions lists sessions, most recently changed first.
func (s *Server) listSessions(c echo.Context) error {
	limit, err := listLimit(c)
	if err != nil {
		return err
	}
	list, err := s.cfg.Store.ListSessions(c.Request().Context(), limit)
	if err != nil {
		return storeUnavailable(err)
	}
	return c.JSON(http.StatusOK, map[string]any{"sessions": list})
}
