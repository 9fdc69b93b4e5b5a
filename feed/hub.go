package feed

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"
)

// Options tune a Hub; the zero value is sane.
type Options struct {
	// Ring is how many recent changes are kept in memory (default 1024);
	// a reader further behind is served from the change log.
	Ring int
	// Buffer is how many changes a subscriber may hold unread (default
	// 256).
	Buffer int
	// Stall is how long a subscriber with a full buffer is waited for
	// before it is dropped (default 5s).
	Stall time.Duration
	// After, when set, starts each stall's clock instead of a timer: the
	// stall ends when the channel it returns yields. A test decides with
	// it when a stall has lasted long enough.
	After func(time.Duration) <-chan time.Time
	// Poll rereads the log at least this often (default 2s), for changes
	// no one notified the hub of.
	Poll   time.Duration
	Logger *slog.Logger
}

// batch bounds one read of the log and one hand-over to a subscriber.
const batch = 256

// Hub is the live change feed; it implements Feed. Publishing never
// waits for a reader: Changed only wakes the hub.
type Hub struct {
	log     ChangeLog
	opts    Options
	wake    chan struct{}
	done    chan struct{}
	stopped chan struct{}

	mu     sync.Mutex
	head   int64    // the last Seq read from the log
	ring   []Change // the most recent changes, oldest first
	subs   map[*subscription]struct{}
	closed bool
}

var _ Feed = (*Hub)(nil)

// New returns a hub reading log, starting at its current end.
func New(ctx context.Context, log ChangeLog, opts Options) (*Hub, error) {
	if opts.Ring <= 0 {
		opts.Ring = 1024
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 256
	}
	if opts.Stall <= 0 {
		opts.Stall = 5 * time.Second
	}
	if opts.Poll <= 0 {
		opts.Poll = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	_, last, err := log.ChangeBounds(ctx)
	if err != nil {
		return nil, err
	}
	h := &Hub{log: log, opts: opts, head: last, wake: make(chan struct{}, 1), done: make(chan struct{}),
		stopped: make(chan struct{}), subs: map[*subscription]struct{}{}}
	go h.run()
	return h, nil
}

// Changed tells the hub the log has new changes; it never blocks.
func (h *Hub) Changed() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Close ends every subscription and stops reading the log.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	close(h.done)
	h.mu.Unlock()
	<-h.stopped
}

func (h *Hub) run() {
	defer close(h.stopped)
	tick := time.NewTicker(h.opts.Poll)
	defer tick.Stop()
	for {
		select {
		case <-h.done:
			return
		case <-h.wake:
		case <-tick.C:
		}
		h.read()
	}
}

// read appends what the log has after head to the ring and wakes the
// subscribers. With no subscriber it only moves head to the log's end and
// empties the ring: reading every change (a decision's whole record) for
// no one was a measurable share of serve's CPU under load
// (docs/performance.md), and a subscriber that comes later and resumes
// from before head is served from the log.
func (h *Hub) read() {
	h.mu.Lock()
	idle := len(h.subs) == 0
	h.mu.Unlock()
	if idle {
		h.skipToEnd()
		return
	}
	for {
		h.mu.Lock()
		after := h.head
		h.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cs, err := h.log.ChangesAfter(ctx, after, batch)
		cancel()
		if err != nil {
			h.opts.Logger.Error("reading the change log", "after", after, "err", err)
			return
		}
		if len(cs) == 0 {
			return
		}
		h.mu.Lock()
		h.ring = append(h.ring, cs...)
		if over := len(h.ring) - h.opts.Ring; over > 0 {
			h.ring = slices.Clone(h.ring[over:])
		}
		h.head = cs[len(cs)-1].Seq
		for s := range h.subs {
			h.deliver(s, cs)
		}
		h.mu.Unlock()
		if len(cs) < batch {
			return
		}
	}
}

// skipToEnd moves head to the log's last change without reading what
// lies before it.
func (h *Hub) skipToEnd() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, last, err := h.log.ChangeBounds(ctx)
	cancel()
	if err != nil {
		h.opts.Logger.Error("reading the change log's end", "err", err)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if last <= h.head {
		return
	}
	h.head, h.ring = last, nil
	// One may have subscribed since the check: it reads from the log.
	for s := range h.subs {
		s.live = false
		s.poke()
	}
}

// deliver hands a live subscriber the changes cs, just read after its
// position, straight into its buffer: no goroutine of its own wakes, and
// its stream's goroutine wakes once for them. When the buffer is full,
// the subscriber's goroutine takes over from its position (it waits for
// room at most Stall). h.mu is held.
func (h *Hub) deliver(s *subscription, cs []Change) {
	if !s.live {
		s.poke()
		return
	}
	for _, c := range cs {
		select {
		case s.out <- c:
			s.pos = c.Seq
		default:
			s.live = false
			s.poke()
			return
		}
	}
}

// Subscribe starts a reader after Seq after; after < 0 starts at the
// end of the log (only what comes next).
func (h *Hub) Subscribe(ctx context.Context, after int64) (Subscription, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrFeedClosed
	}
	head := h.head
	if after < 0 {
		after = head
	}
	inRing := after == head || (len(h.ring) > 0 && after >= h.ring[0].Seq-1 && after < head)
	h.mu.Unlock()
	if !inRing {
		first, last, err := h.log.ChangeBounds(ctx)
		if err != nil {
			return nil, err
		}
		// An id past the log's end was never given by this log (another
		// database); one before its start names changes no longer kept.
		if after > last || (after < head && first > 0 && after < first-1) {
			return nil, ErrResumeTooOld
		}
	}
	s := &subscription{h: h, after: after, out: make(chan Change, h.opts.Buffer),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), pos: after}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrFeedClosed
	}
	// At the end of what the hub read, it is handed what comes next;
	// further behind, its goroutine catches up first.
	s.live = after == h.head
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	go s.pump()
	return s, nil
}

// since returns the next changes after s's position, up to batch, for
// its goroutine to hand over: from the ring when it covers the
// position, else from the log (never past head, so the order with the
// ring holds). Nothing when s is live, and with nothing after its
// position s is live again: the hub hands it the next changes itself
// (deliver).
func (h *Hub) since(s *subscription) ([]Change, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrFeedClosed
	}
	head, pos := h.head, s.pos
	if s.live || pos >= head {
		s.live = true
		h.mu.Unlock()
		return nil, nil
	}
	if len(h.ring) > 0 && pos >= h.ring[0].Seq-1 {
		i := sort.Search(len(h.ring), func(i int) bool { return h.ring[i].Seq > pos })
		out := slices.Clone(h.ring[i:min(i+batch, len(h.ring))])
		h.mu.Unlock()
		return out, nil
	}
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cs, err := h.log.ChangesAfter(ctx, pos, batch)
	if err != nil {
		return nil, err
	}
	for i, c := range cs {
		if c.Seq > head {
			cs = cs[:i]
			break
		}
	}
	if len(cs) == 0 {
		// The log lost what the hub read after pos: it was pruned.
		return nil, ErrResumeTooOld
	}
	return cs, nil
}

func (h *Hub) remove(s *subscription) {
	h.mu.Lock()
	delete(h.subs, s)
	h.mu.Unlock()
}

// subscription is one reader, with a bounded buffer. While it is live
// (at the end of what the hub read, with room in its buffer), the hub
// puts each change in its buffer as it reads it; otherwise its own
// goroutine hands it the changes after its position, from the ring or
// the log, waiting at most Stall for room.
type subscription struct {
	h     *Hub
	after int64
	out   chan Change
	wake  chan struct{}
	stop  chan struct{}
	once  sync.Once
	err   error // set before out is closed

	// Guarded by h.mu: whether the hub delivers to it, and the Seq of
	// the last change it was handed (by the hub while live, else by its
	// goroutine).
	live bool
	pos  int64
}

func (s *subscription) Changes() <-chan Change { return s.out }
func (s *subscription) After() int64           { return s.after }
func (s *subscription) Err() error             { return s.err }

// Close ends the subscription.
func (s *subscription) Close() {
	s.once.Do(func() { close(s.stop) })
}

func (s *subscription) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// pump hands over the changes after the subscriber's position until it
// is closed, the hub closes, or the subscriber stalls with a full buffer.
func (s *subscription) pump() {
	// Removed from the hub, so no delivery follows, before out closes.
	defer close(s.out)
	defer s.h.remove(s)
	for {
		cs, err := s.h.since(s)
		if err != nil {
			s.err = err
			return
		}
		for _, c := range cs {
			if err := s.send(c); err != nil {
				if errors.Is(err, ErrSlowReader) {
					s.h.opts.Logger.Warn("dropped an event reader that fell behind; it resumes from its last id", "stalled_at", c.Seq, "buffer", cap(s.out), "stall", s.h.opts.Stall)
				}
				s.err = err
				return
			}
		}
		if len(cs) > 0 {
			s.h.handed(s, cs[len(cs)-1].Seq)
			continue
		}
		// Live now: the hub delivers until the buffer is full or the
		// ring is dropped, then wakes this goroutine to go on from
		// where the hub stopped.
		select {
		case <-s.wake:
		case <-s.stop:
			return
		case <-s.h.done:
			s.err = ErrFeedClosed
			return
		}
	}
}

// handed records that s's goroutine handed it the changes up to seq.
func (h *Hub) handed(s *subscription, seq int64) {
	h.mu.Lock()
	s.pos = seq
	h.mu.Unlock()
}

// send waits at most Stall for room in the buffer: a reader that takes
// longer is dropped, so nothing waits on it and nothing piles up for it.
func (s *subscription) send(c Change) error {
	select {
	case s.out <- c:
		return nil
	default:
	}
	var stalled <-chan time.Time
	if s.h.opts.After != nil {
		stalled = s.h.opts.After(s.h.opts.Stall)
	} else {
		stall := time.NewTimer(s.h.opts.Stall)
		defer stall.Stop()
		stalled = stall.C
	}
	select {
	case s.out <- c:
		return nil
	case <-stalled:
		return ErrSlowReader
	case <-s.stop:
		return errClosed
	case <-s.h.done:
		return ErrFeedClosed
	}
}

// errClosed: the reader closed the subscription itself.
var errClosed = errors.New("subscription closed")
