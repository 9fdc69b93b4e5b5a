package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

func (s *Server) createSession(c echo.Context) error {
	var spec api.NewSession
	if err := decodeJSON(c, &spec); err != nil {
		return err
	}
	rec, err := s.sessions.Create(c.Request().Context(), spec, callerOf(c).core())
	if err != nil {
		return storeUnavailable(err)
	}
	return c.JSON(http.StatusCreated, rec)
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
	tree, err := s.cfg.Store.SessionTree(ctx, id)
	if err != nil {
		return storeUnavailable(err)
	}
	return c.JSON(http.StatusOK, sessionWithLabels{rec, append([]api.FlowLabel{}, pdp.TreeLabels(tree)...)})
}

// sessionWithLabels is a session as GET /v1/sessions/{id} answers it:
// with the flow labels of its tree, [] for none.
type sessionWithLabels struct {
	api.Session
	Labels []api.FlowLabel `json:"labels"`
}

// mayRead lets a dispatcher read a session, or a decision made in it,
// only when it may use the session's whole tree; anything else answers
// notFound, the same answer as an unknown id.
func (s *Server) mayRead(c echo.Context, sessionID string, notFound error) error {
	return storeUnavailable(s.sessions.MayRead(c.Request().Context(), sessionID, callerOf(c).core(), notFound))
}

// patchableFields are the only fields PATCH may change; the rest are
// fixed at creation.
var patchableFields = []string{"permission_level", "mode", "rules", "command_rules", "path_rules"}

func (s *Server) patchSession(c echo.Context) error {
	var raw map[string]json.RawMessage
	if err := decodeJSON(c, &raw); err != nil {
		return err
	}
	var patch pdp.SessionPatch
	for key, value := range raw {
		if !slices.Contains(patchableFields, key) {
			return fail(http.StatusBadRequest, "field_fixed", "%q cannot be changed; PATCH takes permission_level, mode, rules and path_rules", key)
		}
		var err error
		switch key {
		case "permission_level":
			patch.PermissionLevel = new(api.Level)
			err = json.Unmarshal(value, patch.PermissionLevel)
		case "mode":
			patch.Mode = new(api.Mode)
			err = json.Unmarshal(value, patch.Mode)
		case "rules":
			patch.RulesSet = true
			err = json.Unmarshal(value, &patch.Rules)
		case "command_rules":
			patch.CommandRulesSet = true
			err = json.Unmarshal(value, &patch.CommandRules)
		case "path_rules":
			patch.PathRulesSet = true
			err = json.Unmarshal(value, &patch.PathRules)
		}
		if err != nil {
			return fail(http.StatusBadRequest, "invalid_json", "%s: %v", key, err)
		}
	}
	check := &pdp.SessionTree{Rules: patch.Rules, PathRules: pdp.NewPathRules(patch.PathRules)}
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
	check.CommandRules = patch.CommandRules
	if err := pdp.ValidateSession(check); err != nil {
		return err
	}
	rec, err := s.cfg.Store.UpdateSession(c.Request().Context(), c.Param("id"), patch)
	if err != nil {
		return storeUnavailable(err)
	}
	if patch.PermissionLevel != nil {
		s.changed()
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
		grants = []api.Grant{}
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

// listSessions lists sessions, most recently changed first.
func (s *Server) listSessions(c echo.Context) error {
	return listed(c, "sessions", s.cfg.Store.ListSessions)
}
