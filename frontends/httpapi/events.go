package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/pdp"
)

const (
	// eventsPing is how often an idle stream sends a comment, so proxies
	// keep it open and a reader that went away is noticed.
	eventsPing = 15 * time.Second
	// eventsWriteTimeout bounds one write to a stream: a reader that
	// takes longer is dropped (it resumes with Last-Event-ID).
	eventsWriteTimeout = 10 * time.Second
	// eventsBatchBytes bounds the frames one write carries; a longer
	// burst is written in pieces of about this size.
	eventsBatchBytes = 64 << 10
	// eventsPace is the least time between two writes of changes to a
	// stream: what a stream of asks costs per reader is bounded by it,
	// and a change waits at most this long for it.
	eventsPace = 100 * time.Millisecond
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
	if errors.Is(err, feed.ErrResumeTooOld) {
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
	// HTTP/1.1 without chunks, the body ending when the connection
	// closes (net/http's setup for event streams; HTTP/2 drops the
	// header): a batch of changes goes out in one write system call,
	// where each chunk's framing cost one or two more with a thousand
	// readers (docs/performance.md).
	w.Header().Set("Transfer-Encoding", "identity")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// Over HTTP/2 the connection serves other requests after this one.
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	// Each write must end within eventsWriteTimeout of being armed; it is
	// armed again only once half of it is gone, since arming costs about
	// what a small write does.
	var deadline time.Time
	write := func(frame []byte) error {
		if now := time.Now(); deadline.Sub(now) < eventsWriteTimeout/2 {
			deadline = now.Add(eventsWriteTimeout)
			_ = rc.SetWriteDeadline(deadline)
		}
		_, err := w.Write(frame)
		return err
	}
	send := func(frame []byte) error {
		if err := write(frame); err != nil {
			return err
		}
		return rc.Flush()
	}
	if send(fmt.Appendf(nil, "retry: 2000\nid: %d\nevent: ready\ndata: {}\n\n", sub.After())) != nil {
		return nil
	}
	ping := time.NewTicker(eventsPing)
	defer ping.Stop()
	var batch []byte // the frames of one burst, written at once
	// For eventsPace after a write of changes the stream does not look
	// at its changes: those that come meanwhile wait in its buffer and
	// go out together when the pace ends. Under a stream of asks a
	// reader costs at most one wake-up and one write per eventsPace,
	// however many asks; the first change after a quiet spell goes out
	// at once.
	pace := time.NewTimer(eventsPace)
	defer pace.Stop()
	pacing := true // the ready event was just written
	for {
		changes, paced := sub.Changes(), (<-chan time.Time)(nil)
		if pacing {
			changes, paced = nil, pace.C
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.cfg.Stopping:
			// The reader reconnects, to this server once it is back or
			// to another replica, with the last id it got.
			_ = send([]byte(": the server is shutting down\n\n"))
			return nil
		case <-ping.C:
			if send([]byte(": ping\n\n")) != nil {
				return nil
			}
		case <-paced:
			pacing = false
		case change, open := <-changes:
			if !open {
				// Dropped (slow) or shutting down: the reader reconnects
				// with the last id it got and misses nothing.
				_ = send(fmt.Appendf(nil, ": %v\n\n", sub.Err()))
				return nil
			}
			// The changes already waiting go out with this one, in one
			// buffer, one write and one flush: a reader costs one write
			// system call per burst, not one per change or per 4 KiB of
			// the server's buffers. (A closed channel is seen on the
			// next turn of the loop.)
			batch = batch[:0]
			for open {
				frame, err := s.eventFrame(ctx, change, who)
				if err != nil {
					s.cfg.Logger.Error("event stream ended", "err", err)
					return nil
				}
				batch = append(batch, frame...)
				if len(batch) >= eventsBatchBytes {
					if write(batch) != nil {
						return nil
					}
					batch = batch[:0]
				}
				select {
				case change, open = <-sub.Changes():
				default:
					open = false
				}
			}
			if len(batch) > 0 && write(batch) != nil {
				return nil
			}
			if rc.Flush() != nil {
				return nil
			}
			pace.Reset(eventsPace)
			pacing = true
		}
	}
}

// eventFrame is one change as an SSE frame, or nil when the caller may
// not see it (or its decision is gone from the trail). Every stream that
// sends the change shares one encoding of it (s.frames); the frame must
// not be changed.
func (s *Server) eventFrame(ctx context.Context, change feed.Change, who pdp.Caller) ([]byte, error) {
	if (change.Kind != feed.ChangeLevel || change.Session == nil) && change.Decision == nil {
		return nil, nil
	}
	if err := s.sessions.MayRead(ctx, change.SessionID, who, pdp.ErrNotFound); err != nil {
		var refused *pdp.Refusal
		if errors.As(err, &refused) {
			return nil, nil
		}
		return nil, err
	}
	if raw, ok := s.frames.cached(change); ok {
		return raw, nil
	}
	return s.encodeFrame(change)
}

// encodeFrame is eventFrame's first encoding of change (apart, so the
// frames found encoded already allocate nothing).
func (s *Server) encodeFrame(change feed.Change) ([]byte, error) {
	return s.frames.encoded(change, func() ([]byte, error) {
		var data any = change.Session
		if change.Kind != feed.ChangeLevel || change.Session == nil {
			data = listDecision(*change.Decision, s.cfg.MaxListArgBytes)
		}
		raw, err := json.Marshal(data)
		if err != nil {
			return nil, err
		}
		return fmt.Appendf(nil, "id: %d\nevent: %s\ndata: %s\n\n", change.Seq, change.Kind, raw), nil
	})
}

// frameCache is how many encoded changes eventFrames keeps: the readers
// of a live stream are all at the newest few changes; one further behind
// than this has its frames encoded again.
const frameCache = 256

// eventFrames encodes each change once for all the streams that send it:
// with a thousand readers, encoding it for each took most of an ask's
// CPU. The hub hands every reader the same change, with one *Decision or
// *Session, so that pointer and the Seq are the key; a change read again
// from the log (a reader resuming from far behind) has pointers of its
// own, and is encoded apart from what it holds then.
type eventFrames struct {
	mu     sync.Mutex
	frames map[frameKey]*eventFrame
	keys   [frameCache]frameKey // a ring: the oldest is dropped first
	next   int
	// done holds each encoded frame at its Seq modulo frameCache, for
	// the streams that ask for it after it was encoded (nearly all):
	// found without the lock, the map or a closure.
	done [frameCache]atomic.Pointer[doneFrame]
}

type doneFrame struct {
	key frameKey
	raw []byte
}

type frameKey struct {
	seq      int64
	decision *api.Event
	session  *api.Session
}

// eventFrame is one change's frame, encoded by the first stream that
// needs it; the others wait for it rather than encode it too.
type eventFrame struct {
	once sync.Once
	raw  []byte
	err  error
}

func newEventFrames() *eventFrames {
	return &eventFrames{frames: make(map[frameKey]*eventFrame, frameCache)}
}

// cached returns change's frame when it is encoded already.
func (f *eventFrames) cached(change feed.Change) ([]byte, bool) {
	if d := f.done[slot(change.Seq)].Load(); d != nil && d.key == (frameKey{change.Seq, change.Decision, change.Session}) {
		return d.raw, true
	}
	return nil, false
}

func slot(seq int64) uint64 { return uint64(seq) % frameCache }

// encoded returns change's frame, encoding it with encode the first time.
func (f *eventFrames) encoded(change feed.Change, encode func() ([]byte, error)) ([]byte, error) {
	key := frameKey{change.Seq, change.Decision, change.Session}
	f.mu.Lock()
	e := f.frames[key]
	if e == nil {
		e = &eventFrame{}
		delete(f.frames, f.keys[f.next])
		f.frames[key], f.keys[f.next] = e, key
		f.next = (f.next + 1) % frameCache
	}
	f.mu.Unlock()
	e.once.Do(func() {
		e.raw, e.err = encode()
		if e.err == nil {
			f.done[slot(key.seq)].Store(&doneFrame{key, e.raw})
		}
	})
	return e.raw, e.err
}

// changed tells the feed that the store committed a change.
func (s *Server) changed() {
	if s.cfg.Feed != nil {
		s.cfg.Feed.Changed()
	}
}
