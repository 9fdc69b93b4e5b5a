package httpapi

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// outcome records what a runtime reports became of an ask it showed in
// its own prompt (POST /v1/decisions/by-tool-use/{id}/outcome, {id} the
// runtime's tool_use_id): allow_once when the call ran, deny when it was
// refused. It is a record of what the runtime did, never a permission:
// it is kept apart from the person's answer, so the ask stays pending
// and no request waiting for a person's answer (?wait=) is woken; it is
// recorded under the runtime's channel, never a person's, creates no
// grant and names the token that reported it.
func (s *Server) outcome(c echo.Context) error {
	var b api.OutcomeRequest
	if err := decodeJSON(c, &b); err != nil {
		return err
	}
	rec, err := s.desk.RecordOutcome(c.Request().Context(), c.Param("id"), b.Answer, b.Channel, callerOf(c).core())
	if errors.Is(err, pdp.ErrConflict) {
		return err
	}
	if err != nil {
		return storeUnavailable(err)
	}
	c.Set(decisionIDKey, rec.DecisionID)
	return c.JSON(http.StatusOK, rec)
}
