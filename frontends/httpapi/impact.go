package httpapi

import (
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/pdp"
)

// policyImpact answers POST /v1/policy/impact?since=&session_id=: the body
// is a candidate bundle (tar.gz); the answer is what it would change in
// the recorded decisions in range (pdp replay's JSON report).
func (s *Server) policyImpact(c echo.Context) error {
	if s.cfg.Impact == nil {
		return fail(http.StatusServiceUnavailable, "impact_unavailable", "this server has no audit trail to replay")
	}
	var f pdp.ReplayFilter
	f.SessionID = c.QueryParam("session_id")
	if raw := c.QueryParam("since"); raw != "" {
		since, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			d, derr := time.ParseDuration(raw)
			if derr != nil || d < 0 {
				return fail(http.StatusBadRequest, "invalid_since", "since must be an RFC 3339 time or a positive duration back from now, got %q", raw)
			}
			since = time.Now().Add(-d)
		}
		f.Since = since
	}
	bundle, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err // the body limit's 413 passes through
	}
	if len(bundle) == 0 {
		return fail(http.StatusBadRequest, "invalid_bundle", "the body must be a policy bundle (tar.gz)")
	}
	// A bundle that does not load is bad input (a *pdp.Error, 400); a
	// trail that cannot be read is the store's failure.
	report, err := s.cfg.Impact(c.Request().Context(), bundle, f)
	if err != nil {
		return storeUnavailable(err)
	}
	return c.JSON(http.StatusOK, report)
}
