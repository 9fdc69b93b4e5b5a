package httpapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

const (
	defaultListLimit = 50
	maxListLimit     = 500
)

// getDecision returns one audit event with its answer; ?wait=30s holds
// an unanswered ask until a person answers or the wait ends. Only a
// person's answer ends the wait: a runtime's outcome is no answer.
func (s *Server) getDecision(c echo.Context) error {
	id := c.Param("id")
	wait, err := s.waitParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	// Checked before parking: a dispatcher cannot wait on, or learn
	// anything of, another runtime's decision.
	mayRead := func(rec api.Event) error {
		return s.mayRead(c, rec.SessionID, fmt.Errorf("decision %q: %w", id, pdp.ErrNotFound))
	}
	park := func() func(string) {
		ended := s.waiting(ctx, id, wait)
		// Recorded in the store first, so that whoever reads the ask once
		// the wait is logged sees the waiter.
		stop := s.startWaiting(ctx, id, callerOf(c).name, wait)
		s.cfg.Logger.Debug("waiting for an answer", "decision_id", id, "wait", wait)
		return func(result string) { stop(); ended(result) }
	}
	rec, err := s.desk.Await(ctx, id, wait, mayRead, park)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.withWaiting(ctx, rec))
}

type answerBody struct {
	Answer  string `json:"answer"`
	Channel string `json:"channel"`
}

// answer records a person's answer to an ask.
func (s *Server) answer(c echo.Context) error {
	var b answerBody
	if err := decodeJSON(c, &b); err != nil {
		return err
	}
	id := c.Param("id")
	rec, err := s.desk.Answer(c.Request().Context(), id, b.Answer, b.Channel, callerOf(c).answerer())
	if err != nil {
		return err
	}
	c.Set(decisionIDKey, id)
	return c.JSON(http.StatusOK, rec)
}

// listDecisions: GET /v1/decisions?session_id=&decision=&source=&since=&limit=&before=,
// newest first. Strings longer than MaxListArgBytes are cut (the item
// says "truncated": true) so a list stays cheap to poll;
// GET /v1/decisions/{id} returns the whole record.
func (s *Server) listDecisions(c echo.Context) error {
	f := pdp.DecisionFilter{SessionID: c.QueryParam("session_id"), Decision: c.QueryParam("decision"), Source: c.QueryParam("source"), Before: c.QueryParam("before")}
	switch c.QueryParam("pending") {
	case "", "false":
	case "true":
		if f.Decision != "" && f.Decision != api.Ask {
			return fail(http.StatusBadRequest, "invalid_decision", "pending=true lists asks: decision must be ask or absent")
		}
		f.Pending, f.Decision = true, api.Ask
	default:
		return fail(http.StatusBadRequest, "invalid_pending", "pending must be true or false")
	}
	if since := c.QueryParam("since"); since != "" {
		t, err := time.Parse(time.RFC3339, since)
		if err != nil {
			return fail(http.StatusBadRequest, "invalid_since", "since must be an RFC 3339 time such as 2026-11-29T10:00:00Z")
		}
		f.Since = t
	}
	limit, err := listLimit(c)
	if err != nil {
		return err
	}
	f.Limit = limit
	switch f.Decision {
	case "", api.Allow, api.Ask, api.Deny:
	default:
		return fail(http.StatusBadRequest, "invalid_decision", "decision must be allow, ask or deny")
	}
	list, err := s.cfg.Store.Decisions(c.Request().Context(), f)
	if err != nil {
		return storeUnavailable(err)
	}
	s.listWaiting(c.Request().Context(), list)
	items := make([]api.ListedEvent, len(list))
	for i, rec := range list {
		items[i] = listDecision(rec, s.cfg.MaxListArgBytes)
	}
	page := api.Page{Decisions: items}
	// A pending list puts the waited-on asks first: it has no next page
	// (the pending asks are few, asks.expire_after bounds them).
	if len(list) == f.Limit && !f.Pending {
		page.NextBefore = list[len(list)-1].DecisionID
	}
	return c.JSON(http.StatusOK, page)
}

// waitParam is a request's ?wait= (how long to hold an unanswered ask),
// capped at server.max_wait; none is 0.
func (s *Server) waitParam(c echo.Context) (time.Duration, error) {
	w := c.QueryParam("wait")
	if w == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(w)
	if err != nil || d < 0 {
		return 0, fail(http.StatusBadRequest, "invalid_wait", "wait must be a duration such as 30s, got %q", w)
	}
	return min(d, s.cfg.MaxWait), nil
}
