package httpapi

import (
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
// the last 14 days) with their evidence and impact (pdp suggest's JSON).
// A person or an auditor reads the whole trail; a dispatcher only a
// session it may read, named by session_id.
func (s *Server) listSuggestions(c echo.Context) error {
	trail, ok := s.cfg.Store.(suggest.Trail)
	if !ok || s.cfg.Engine == nil {
		return fail(http.StatusServiceUnavailable, "suggestions_unavailable", "this server has no audit trail to mine")
	}
	opts := suggest.Options{SessionID: c.QueryParam("session_id"), Since: time.Now().Add(-suggest.DefaultWindow)}
	if !callerOf(c).core().ReadsAll {
		if opts.SessionID == "" {
			return fail(http.StatusForbidden, "forbidden", "a dispatcher reads the suggestions of one session it may read: name it with session_id")
		}
		if err := s.mayRead(c, opts.SessionID, pdp.ErrNotFound); err != nil {
			return err
		}
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
