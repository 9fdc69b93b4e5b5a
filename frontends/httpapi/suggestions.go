package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/pdp/suggest"
)

// listSuggestions answers GET /v1/suggestions?since=&min_answers=&session_id=:
// the command rules mined from the answered asks in the window (default
// the last 14 days) with their evidence and impact (pdp suggest's JSON),
// of the whole trail or, with session_id, of that session's project (its
// root's owner's sessions in its workspace). A person or an auditor
// reads any; a dispatcher only the project of a session it may read.
func (s *Server) listSuggestions(c echo.Context) error {
	trail, ok := s.cfg.Store.(suggest.Trail)
	if !ok || s.cfg.Engine == nil {
		return fail(http.StatusServiceUnavailable, "suggestions_unavailable", "this server has no audit trail to mine")
	}
	opts := suggest.Options{Since: time.Now().Add(-suggest.DefaultWindow)}
	session := c.QueryParam("session_id")
	if !callerOf(c).core().ReadsAll && session == "" {
		return fail(http.StatusForbidden, "forbidden", "a dispatcher reads the suggestions of the project of a session it may read: name it with session_id")
	}
	if session != "" {
		if err := s.mayRead(c, session, fmt.Errorf("session %q: %w", session, pdp.ErrNotFound)); err != nil {
			return err
		}
		project, err := suggest.ProjectSessions(c.Request().Context(), s.cfg.Store, session)
		if err != nil {
			return storeUnavailable(err)
		}
		opts.Sessions = project
	}
	if raw := c.QueryParam("since"); raw != "" {
		since, ok := parseSince(raw, time.Now())
		if !ok {
			return fail(http.StatusBadRequest, "invalid_since", "since must be an RFC 3339 time, a duration back from now (72h) or a number of days (14d), got %q", raw)
		}
		opts.Since = since
	}
	if raw := c.QueryParam("min_answers"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > 1_000_000 {
			return fail(http.StatusBadRequest, "invalid_min_answers", "min_answers must be a whole number from 1, got %q", raw)
		}
		opts.MinAnswers = n
	}
	out, err := suggest.Suggest(c.Request().Context(), s.cfg.Engine.Policy(), trail, opts)
	if err != nil {
		return storeUnavailable(err)
	}
	return c.JSON(http.StatusOK, out)
}

// parseSince reads an RFC 3339 time, a duration back from now or a
// number of days back.
func parseSince(raw string, now time.Time) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, raw); err == nil {
		return t, true
	}
	if days, ok := strings.CutSuffix(raw, "d"); ok {
		n, err := strconv.Atoi(days)
		return now.AddDate(0, 0, -n), err == nil && n >= 0 && n <= 36600
	}
	d, err := time.ParseDuration(raw)
	return now.Add(-d), err == nil && d >= 0
}

// acceptBody is POST /v1/suggestions/accept.
type acceptBody struct {
	Pattern    string `json:"pattern"`
	SessionID  string `json:"session_id"`
	Since      string `json:"since"`
	MinAnswers int    `json:"min_answers"`
}

// acceptSuggestion answers POST /v1/suggestions/accept (a person's act):
// it accepts a suggestion for the project of session_id through the
// grant code every answer uses. The suggestion is mined again (it must
// still be one); its example call is decided anew in the session — an
// ask, recorded in the trail and the live feed like any — and answered
// allow_project on the channel "suggestion", which grants the call's
// fingerprint to every session of the project. Only a suggestion whose
// rule is its fingerprint can be accepted so: a grant of a shorter
// fingerprint would allow more than the rule.
func (s *Server) acceptSuggestion(c echo.Context) error {
	trail, ok := s.cfg.Store.(suggest.AcceptStore)
	if !ok || s.cfg.Engine == nil {
		return fail(http.StatusServiceUnavailable, "suggestions_unavailable", "this server has no audit trail to mine")
	}
	var b acceptBody
	if err := decodeJSON(c, &b); err != nil {
		return err
	}
	a := suggest.Acceptance{Pattern: b.Pattern, SessionID: b.SessionID, MinAnswers: b.MinAnswers}
	if b.Since != "" {
		since, ok := parseSince(b.Since, time.Now())
		if !ok {
			return fail(http.StatusBadRequest, "invalid_since", "since must be an RFC 3339 time, a duration back from now (72h) or a number of days (14d), got %q", b.Since)
		}
		a.Since = since
	}
	rec, err := suggest.Accept(c.Request().Context(), s.desk, trail, a, callerOf(c).core(), callerOf(c).answerer())
	if err != nil {
		return err
	}
	c.Set(decisionIDKey, rec.DecisionID)
	return c.JSON(http.StatusOK, rec)
}
