package httpapi

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
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
// agents' hook endpoints).
func (s *Server) decideCall(c echo.Context, req api.DecideRequest, explain bool) (api.Decision, error) {
	ctx := c.Request().Context()
	_, span := s.span(ctx, pdp.SpanValidate)
	err := pdp.ValidateRequest(req)
	endSpan(span, err)
	if err != nil {
		return api.Decision{}, err
	}
	// The tree read has the decision's deadline; the audit write has its
	// own (internal/service gives the audit log one), and the evaluation — an LLM
	// call included — is not store work.
	rctx, cancel := context.WithTimeout(ctx, s.cfg.DecisionTimeout)
	rctx, span = s.span(rctx, pdp.SpanSessionRead)
	session, err := s.sessions.Resolve(rctx, req, callerOf(c).core())
	endSpan(span, err)
	cancel()
	if err != nil {
		return api.Decision{}, storeUnavailable(err)
	}
	d, err := s.cfg.Engine.Decide(ctx, pdp.Call{Request: req, Session: session, Explain: explain})
	if d.DecisionID != "" {
		c.Set(decisionIDKey, d.DecisionID)
	}
	return d, err
}
