package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/api"
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
	trail, ok := s.cfg.Store.(suggest.Trail)
	if !ok || s.cfg.Engine == nil {
		return fail(http.StatusServiceUnavailable, "suggestions_unavailable", "this server has no audit trail to mine")
	}
	var b acceptBody
	if err := decodeJSON(c, &b); err != nil {
		return err
	}
	if b.Pattern == "" || b.SessionID == "" {
		return fail(http.StatusBadRequest, "invalid_accept", "pattern and session_id are required")
	}
	ctx := c.Request().Context()
	sess, err := s.cfg.Store.GetSession(ctx, b.SessionID)
	if err != nil {
		return storeUnavailable(err)
	}
	rootID, err := s.cfg.Store.RootID(ctx, b.SessionID)
	if err != nil {
		return storeUnavailable(err)
	}
	if root, err := s.cfg.Store.GetSession(ctx, rootID); err != nil {
		return storeUnavailable(err)
	} else if root.Workspace == "" {
		return fail(http.StatusUnprocessableEntity, "not_grantable", "session %q has no workspace, so there is no project to accept for", rootID)
	}
	opts := suggest.Options{Since: time.Now().Add(-suggest.DefaultWindow), MinAnswers: b.MinAnswers}
	if b.Since != "" {
		since, ok := parseSince(b.Since, time.Now())
		if !ok {
			return fail(http.StatusBadRequest, "invalid_since", "since must be an RFC 3339 time, a duration back from now (72h) or a number of days (14d), got %q", b.Since)
		}
		opts.Since = since
	}
	if b.MinAnswers < 0 {
		return fail(http.StatusBadRequest, "invalid_min_answers", "min_answers must be a whole number from 1")
	}
	mined, err := suggest.Suggest(ctx, s.cfg.Engine.Policy(), trail, opts)
	if err != nil {
		return storeUnavailable(err)
	}
	var sug *api.Suggestion
	for i := range mined.Suggestions {
		if mined.Suggestions[i].Pattern == b.Pattern {
			sug = &mined.Suggestions[i]
		}
	}
	if sug == nil || len(sug.Evidence.Examples) == 0 {
		return fail(http.StatusNotFound, "unknown_suggestion", "%q is not a suggestion of the trail now", b.Pattern)
	}
	if sug.Pattern != sug.Fingerprint {
		return fail(http.StatusUnprocessableEntity, "not_grantable", "a project grant names the fingerprint %q, which allows more than the rule %q: copy the rule as policy data instead", sug.Fingerprint, sug.Pattern)
	}
	example, err := s.cfg.Store.Decision(ctx, sug.Evidence.Examples[0])
	if err != nil {
		return storeUnavailable(err)
	}
	cwd := sess.Workspace
	if cwd == "" {
		cwd = example.Cwd
	}
	req := api.DecideRequest{SessionID: b.SessionID, Tool: example.Tool, Args: example.Args, Cwd: cwd}
	tree, err := s.sessions.Resolve(ctx, req, callerOf(c).core())
	if err != nil {
		return storeUnavailable(err)
	}
	// Only a call this session would ask for, with the suggestion's
	// fingerprint, is decided and answered.
	sim, err := s.cfg.Engine.Simulate(ctx, pdp.Call{Request: req, Session: tree}, false)
	if err != nil {
		return err
	}
	if sim.Decision != api.Ask || sim.Fingerprint == nil || *sim.Fingerprint != sug.Fingerprint || !sim.Grantable {
		return fail(http.StatusConflict, "nothing_to_accept", "%q is %s in session %q (%s), not a grantable ask", b.Pattern, sim.Decision, b.SessionID, sim.Reason)
	}
	d, err := s.cfg.Engine.Decide(ctx, pdp.Call{Request: req, Session: tree})
	if err != nil {
		return err
	}
	if d.Decision != api.Ask {
		return fail(http.StatusConflict, "nothing_to_accept", "%q is %s in session %q (%s), not an ask", b.Pattern, d.Decision, b.SessionID, d.Reason)
	}
	rec, err := s.cfg.Store.AnswerDecision(ctx, d.DecisionID, api.AllowProject, suggest.AcceptChannel, callerOf(c).name)
	if err != nil {
		return err
	}
	s.waiters.notify(d.DecisionID)
	s.changed()
	c.Set(decisionIDKey, d.DecisionID)
	return c.JSON(http.StatusOK, rec)
}
