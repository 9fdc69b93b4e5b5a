package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/frontends/hooks/hookflow"
	"github.com/toolperm/pdp/pdp"
)

// hookDecisionTimeout bounds one hook decision, as the command hooks'
// default --timeout does.
const hookDecisionTimeout = 20 * time.Second

const hookCallKey = "hook_call"

// hookAnswers answers every failure of a hook request — a refused token,
// bad input, a store that is down — with status 200 and the agent's own
// deny: an agent takes an error status for a hook that failed, and most
// of them then run the tool.
func (s *Server) hookAnswers(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		a, ok := s.hookAgent(c.Param("agent"))
		if !ok {
			return fail(http.StatusNotFound, "unknown_agent", "no hook endpoint for agent %q (one of %s)", c.Param("agent"), strings.Join(s.hookAgentNames(), ", "))
		}
		err := next(c)
		if err == nil || c.Response().Committed {
			return err
		}
		var refused *pdp.Refusal
		if errors.As(err, &refused) {
			s.refuse(c, http.StatusForbidden, callerOf(c).name, refused.Reason)
		}
		ae := classify(err)
		if ae.Status >= 500 {
			s.cfg.Logger.Error("hook request failed", "agent", c.Param("agent"), "status", ae.Status, "err", err)
		}
		call, _ := c.Get(hookCallKey).(hookflow.Call)
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, a.Reply(call, hookflow.Deny(errors.New(ae.Message))).Body)
	}
}

// hookRoute is the route of the hook endpoint.
const hookRoute = "/v1/hooks/:agent"

func isHookRoute(c echo.Context) bool { return c.Path() == hookRoute }

// hookAgent is the agent of that name among Config.Agents.
func (s *Server) hookAgent(name string) (hookflow.Agent, bool) {
	for _, a := range s.cfg.Agents {
		if a.Name == name {
			return a, true
		}
	}
	return hookflow.Agent{}, false
}

func (s *Server) hookAgentNames() []string {
	names := make([]string, 0, len(s.cfg.Agents))
	for _, a := range s.cfg.Agents {
		names = append(names, a.Name)
	}
	return names
}

// hook answers POST /v1/hooks/{agent}: the agent's event decoded by its
// adapter, decided by the core as POST /v1/decide does (?wait= holds an
// ask for a person's answer, at most the server's longest wait), encoded
// in the agent's own output.
func (s *Server) hook(c echo.Context) error {
	a, _ := s.hookAgent(c.Param("agent")) // hookAnswers found it
	raw, err := io.ReadAll(io.LimitReader(c.Request().Body, s.cfg.MaxBodyBytes+1))
	if err != nil {
		return fail(http.StatusBadRequest, "invalid_json", "reading the hook event: %v", err)
	}
	if int64(len(raw)) > s.cfg.MaxBodyBytes {
		return fail(http.StatusRequestEntityTooLarge, "body_too_large", "the hook event is larger than the server's limit of %d bytes (server.max_body_bytes)", s.cfg.MaxBodyBytes)
	}
	call, err := a.Parse(raw)
	c.Set(hookCallKey, call)
	if err != nil {
		return fail(http.StatusBadRequest, "invalid_event", "%v", err)
	}
	wait, err := s.waitParam(c)
	if err != nil {
		return err
	}
	o := hookflow.Options{PDP: serverPDP{s: s, c: c}, ConsoleURL: c.Scheme() + "://" + c.Request().Host + "/ui/",
		Timeout: hookDecisionTimeout, Wait: wait, CanAsk: a.CanAsk(call)}
	ctx := c.Request().Context()
	if call.Kind == hookflow.Outcome {
		if err := hookflow.Record(ctx, o, call); err != nil {
			s.cfg.Logger.Warn("hook outcome not recorded", "agent", call.Agent, "err", err)
		}
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, a.Reply(call, hookflow.Verdict{}).Body)
	}
	v := hookflow.Decide(ctx, o, call)
	if v.DecisionID != "" {
		c.Set(decisionIDKey, v.DecisionID)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, a.Reply(call, v).Body)
}

// serverPDP is the flow's PDP inside the server: the core, as the
// request's caller.
type serverPDP struct {
	s *Server
	c echo.Context
}

func (p serverPDP) CreateSession(ctx context.Context, spec api.NewSession) error {
	_, err := p.s.sessions.Create(ctx, spec, callerOf(p.c).core())
	if errors.Is(err, pdp.ErrExists) {
		return nil
	}
	return storeUnavailable(err)
}

func (p serverPDP) Decide(_ context.Context, r api.DecideRequest) (api.Decision, error) {
	return p.s.decideCall(p.c, r, false)
}

// Answer waits for a person's answer to the caller's own ask.
func (p serverPDP) Answer(ctx context.Context, id string, wait time.Duration) (*api.Answer, error) {
	park := func() func(string) {
		p.s.cfg.Logger.Debug("holding an ask for an answer", "decision_id", id, "wait", wait)
		return p.s.waiting(ctx, id, wait)
	}
	rec, err := p.s.desk.Await(ctx, id, wait, nil, park)
	if err != nil || rec.Answer == nil || rec.Answer.ReportedBy != "" {
		return nil, err
	}
	return rec.Answer, nil
}

func (p serverPDP) RecordOutcome(ctx context.Context, toolUseID, outcome, channel string) error {
	_, err := p.s.desk.RecordOutcome(ctx, toolUseID, outcome, channel, callerOf(p.c).core())
	if err == nil || errors.Is(err, pdp.ErrConflict) || errors.Is(err, pdp.ErrNotFound) {
		return nil
	}
	return err
}
