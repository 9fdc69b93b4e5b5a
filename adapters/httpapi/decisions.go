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
	// Register before reading, so an answer between the read and the
	// wait is not missed.
	answered, release := s.waiters.watch(id)
	defer func() { release() }()
	rec, err := s.cfg.Store.Decision(ctx, id)
	if err != nil {
		return storeUnavailable(err)
	}
	// Checked before parking: a dispatcher cannot wait on, or learn
	// anything of, another runtime's decision.
	if err := s.mayRead(c, rec.SessionID, fmt.Errorf("decision %q: %w", id, pdp.ErrNotFound)); err != nil {
		return err
	}
	if wait > 0 && rec.Decision.Decision == api.Ask && rec.Answer == nil {
		ended := s.waiting(ctx, id, wait)
		// Recorded in the store first, so that whoever reads the ask
		// once the wait is logged sees the waiter.
		defer s.startWaiting(ctx, id, callerOf(c).name, wait)()
		s.cfg.Logger.Debug("waiting for an answer", "decision_id", id, "wait", wait)
		result := "answered"
		defer func() { ended(result) }()
		timer := time.NewTimer(wait)
		defer timer.Stop()
		for rec.Answer == nil {
			select {
			case <-answered:
				// Woken without an answer (none is sent for an outcome,
				// but nothing else is taken for one either): wait on.
				release()
				answered, release = s.waiters.watch(id)
				if rec, err = s.cfg.Store.Decision(ctx, id); err != nil {
					result = "error"
					return storeUnavailable(err)
				}
			case <-timer.C:
				// The record as it is when the wait ends (an outcome
				// recorded meanwhile included).
				result = "timeout"
				return s.decisionAsItStands(c, id)
			case <-s.cfg.Stopping:
				// Shutting down: the record as it stands, still pending,
				// so the runtime asks again, of another replica or of
				// this one once it is back.
				result = "stopping"
				return s.decisionAsItStands(c, id)
			case <-ctx.Done():
				result = "gone"
				return ctx.Err()
			}
		}
	}
	return c.JSON(http.StatusOK, s.withWaiting(ctx, rec))
}

// decisionAsItStands answers a wait that ends without an answer with the
// decision read again.
func (s *Server) decisionAsItStands(c echo.Context, id string) error {
	rec, err := s.cfg.Store.Decision(c.Request().Context(), id)
	if err != nil {
		return storeUnavailable(err)
	}
	return c.JSON(http.StatusOK, s.withWaiting(c.Request().Context(), rec))
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
	switch b.Answer {
	case api.AllowOnce, api.AllowSession, api.AllowProject, api.DenyAnswer:
	default:
		return fail(http.StatusBadRequest, "invalid_answer", "answer must be allow_once, allow_session, allow_project or deny, got %q", b.Answer)
	}
	if b.Channel == "" {
		b.Channel = "api"
	}
	if len(b.Channel) > 64 {
		return fail(http.StatusBadRequest, "invalid_channel", "channel must be at most 64 characters")
	}
	id := c.Param("id")
	rec, err := s.cfg.Store.AnswerDecision(c.Request().Context(), id, b.Answer, b.Channel, callerOf(c).name)
	if err != nil {
		return err
	}
	s.waiters.notify(id)
	s.changed()
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
