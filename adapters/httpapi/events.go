package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/pdp"
)

const (
	// eventsPing is how often an idle stream sends a comment, so proxies
	// keep it open and a reader that went away is noticed.
	eventsPing = 15 * time.Second
	// eventsWriteTimeout bounds one write to a stream: a reader that
	// takes longer is dropped (it resumes with Last-Event-ID).
	eventsWriteTimeout = 10 * time.Second
)

// events streams the change feed as Server-Sent Events: "ask", "answer"
// (the decision, as GET /v1/decisions lists it) and "level" (the
// session), each with the id a reconnect sends as Last-Event-ID to
// resume where it stopped. The first event, "ready", carries the position
// the stream starts from. A dispatcher sees only the sessions it may
// read; user, auditor and admin see every one.
func (s *Server) events(c echo.Context) error {
	if s.cfg.Feed == nil {
		return fail(http.StatusServiceUnavailable, "events_unavailable", "this server has no live event feed")
	}
	after := int64(-1)
	if id := c.Request().Header.Get("Last-Event-ID"); id != "" {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n < 0 {
			return fail(http.StatusBadRequest, "invalid_last_event_id", "Last-Event-ID must be an id this stream sent (a number)")
		}
		after = n
	}
	ctx := c.Request().Context()
	sub, err := s.cfg.Feed.Subscribe(ctx, after)
	if errors.Is(err, pdp.ErrResumeTooOld) {
		return fail(http.StatusGone, "resume_too_old", "the events after %d are not kept (any more): list what you need again (GET /v1/decisions?decision=ask) and reconnect without Last-Event-ID", after)
	}
	if err != nil {
		return fail(http.StatusServiceUnavailable, "events_unavailable", "the live event feed is unavailable: %v", err)
	}
	defer sub.Close()
	who := callerOf(c).core()
	w := c.Response()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// The connection may serve another request after this one.
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	send := func(frame string) error {
		_ = rc.SetWriteDeadline(time.Now().Add(eventsWriteTimeout))
		if _, err := io.WriteString(w, frame); err != nil {
			return err
		}
		return rc.Flush()
	}
	if send(fmt.Sprintf("retry: 2000\nid: %d\nevent: ready\ndata: {}\n\n", sub.After())) != nil {
		return nil
	}
	ping := time.NewTicker(eventsPing)
	defer ping.Stop()
	for {
		var frame string
		select {
		case <-ctx.Done():
			return nil
		case <-s.cfg.Stopping:
			// The reader reconnects, to this server once it is back or
			// to another replica, with the last id it got.
			_ = send(": the server is shutting down\n\n")
			return nil
		case <-ping.C:
			frame = ": ping\n\n"
		case change, open := <-sub.Changes():
			if !open {
				// Dropped (slow) or shutting down: the reader reconnects
				// with the last id it got and misses nothing.
				_ = send(fmt.Sprintf(": %v\n\n", sub.Err()))
				return nil
			}
			frame, err = s.eventFrame(ctx, change, who)
			if err != nil {
				s.cfg.Logger.Error("event stream ended", "err", err)
				return nil
			}
		}
		if frame != "" && send(frame) != nil {
			return nil
		}
	}
}

// eventFrame is one change as an SSE frame, or "" when the caller may not
// see it (or its decision is gone from the trail).
func (s *Server) eventFrame(ctx context.Context, change pdp.Change, who pdp.Caller) (string, error) {
	var data any
	switch {
	case change.Kind == pdp.ChangeLevel && change.Session != nil:
		data = change.Session
	case change.Decision != nil:
		data = listDecision(*change.Decision, s.cfg.MaxListArgBytes)
	default:
		return "", nil
	}
	err := s.sessions.MayRead(ctx, change.SessionID, who, pdp.ErrNotFound)
	var refused *pdp.Refusal
	if errors.As(err, &refused) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", change.Seq, change.Kind, raw), nil
}

// changed tells the feed that the store committed a change.
func (s *Server) changed() {
	if s.cfg.Feed != nil {
		s.cfg.Feed.Changed()
	}
}
