package httpapi

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/pdp"
)

// outcome records what a runtime reports became of an ask it showed in
// its own prompt (POST /v1/decisions/by-tool-use/{id}/outcome, {id} the
// runtime's tool_use_id): allow_once when the call ran, deny when it was
// refused. It is a record, not a permission: only on an unanswered ask of
// a session the dispatcher may use, never a grant, and the answer names
// the token that reported it.
func (s *Server) outcome(c echo.Context) error {
	var b answerBody
	if err := decodeJSON(c, &b); err != nil {
		return err
	}
	if b.Channel == "" {
		b.Channel = "runtime"
	}
	if len(b.Channel) > 64 {
		return fail(http.StatusBadRequest, "invalid_channel", "channel must be at most 64 characters")
	}
	outcomes := pdp.Outcomes{Sessions: s.sessions, Store: s.cfg.Store}
	rec, err := outcomes.Record(c.Request().Context(), c.Param("id"), b.Answer, b.Channel, callerOf(c).core())
	if errors.Is(err, pdp.ErrConflict) {
		return err
	}
	if err != nil {
		return storeUnavailable(err)
	}
	s.waiters.notify(rec.DecisionID)
	s.changed()
	c.Set(decisionIDKey, rec.DecisionID)
	return c.JSON(http.StatusOK, rec)
}
