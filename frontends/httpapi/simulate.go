package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// simulateBody is a decide body with an inline session, and whether the
// LLM may be asked.
type simulateBody struct {
	api.DecideRequest
	Session *pdp.SessionTree `json:"session,omitempty"`
	Assess  bool             `json:"assess,omitempty"`
}

// simulate answers like /v1/decide?explain=1 but writes nothing: no
// session, no event, no grant, and no LLM call unless asked.
func (s *Server) simulate(c echo.Context) error {
	var b simulateBody
	if err := decodeJSON(c, &b); err != nil {
		return err
	}
	if b.Assess && !callerOf(c).has(User) {
		return forbid("simulate with assess", "only a user or admin may have a simulation call the LLM")
	}
	if b.SessionID == "" {
		b.SessionID = "simulation"
	}
	call := pdp.Call{Request: b.DecideRequest, Session: pdp.InlineSession(b.Session, b.Cwd)}
	d, err := s.cfg.Engine.Simulate(c.Request().Context(), call, b.Assess)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}
