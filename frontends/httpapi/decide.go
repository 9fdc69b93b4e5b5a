package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/api"
)

// decide answers POST /v1/decide in the session the core's session rules
// resolve (an unknown id is created with the defaults). The answer is sent
// only after its audit event is committed.
func (s *Server) decide(c echo.Context) error {
	var req api.DecideRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	d, err := s.decideCall(c, req, c.QueryParam("explain") == "1")
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

// decideCall decides one request of the caller (POST /v1/decide and the
// agents' hook endpoints) at the desk.
func (s *Server) decideCall(c echo.Context, req api.DecideRequest, explain bool) (api.Decision, error) {
	d, err := s.desk.Decide(c.Request().Context(), req, callerOf(c).core(), explain)
	if d.DecisionID != "" {
		c.Set(decisionIDKey, d.DecisionID)
	}
	return d, err
}
