package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/pdp"
)

// Observer counts the deliveries, for metrics.
type Observer interface {
	// NotifySent: the sink took an event.
	NotifySent(sink string)
	// NotifyFailed: one attempt failed (it may be tried again).
	NotifyFailed(sink string)
	// NotifyDropped: an event was given up, because the sink's queue was
	// full ("queue_full") or every attempt failed ("gave_up").
	NotifyDropped(sink, reason string)
}

// Claims is a store shared by replicas that hands each event of the
// change log to one of them: ClaimDelivery is true for the first replica
// to claim the sink's event seq, false for every other.
type Claims interface {
	ClaimDelivery(ctx context.Context, sink string, seq int64) (bool, error)
}

// Options are what a Notifier is built from.
type Options struct {
	Sinks []Sink
	// Feed is the change feed it reads.
	Feed feed.Feed
	// Claims, when set, makes each event one replica's to send.
	Claims Claims
	// ConsoleURL is the console's base URL (https://pdp.example:8181) the
	// events link to; empty: no link.
	ConsoleURL string
	Observer   Observer
	Logger     *slog.Logger
	// Tickets issues the answer links of the sinks that want them, valid
	// for TicketTTL after the ask (asks.expire_after).
	Tickets   TicketIssuer
	TicketTTL time.Duration
}

// TicketIssuer makes one-time answer tickets (pdp.TicketStore).
type TicketIssuer interface {
	IssueTickets(ctx context.Context, decisionID, sink string, answers []string, expires time.Time) (map[string]string, error)
}

// Notifier delivers the feed's changes to the sinks.
type Notifier struct {
	opts    Options
	workers []*worker
}

// New checks the sinks and returns a Notifier; Run starts it.
func New(opts Options) (*Notifier, error) {
	if opts.Feed == nil {
		return nil, errors.New("notify: no change feed")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	n := &Notifier{opts: opts}
	seen := map[string]bool{}
	for i := range opts.Sinks {
		s := opts.Sinks[i]
		if err := s.Check(); err != nil {
			return nil, err
		}
		if s.AnswerLinks && (opts.Tickets == nil || opts.TicketTTL <= 0 || opts.ConsoleURL == "") {
			return nil, fmt.Errorf("sink %s: answer_links need the store's tickets, an expiry and the console's URL", s.Name)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("sink %s: the name is taken by another sink", s.Name)
		}
		seen[s.Name] = true
		d, err := deliveryOf(&s)
		if err != nil {
			return nil, err
		}
		n.workers = append(n.workers, &worker{sink: s, deliver: d, n: n, wake: make(chan struct{}, 1)})
	}
	return n, nil
}

// Start subscribes to the feed — every change committed after Start
// returns is seen — and delivers in the background until stop, which
// ends it and waits (an attempt in flight is cut).
func (n *Notifier) Start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	sub, err := n.opts.Feed.Subscribe(ctx, -1)
	var wg sync.WaitGroup
	for _, w := range n.workers {
		wg.Go(func() { w.run(ctx) })
	}
	wg.Go(func() { n.read(ctx, sub, err) })
	return func() { cancel(); wg.Wait() }
}

// read hands each change to the workers of the sinks that want it. It
// never waits on a sink: a full queue drops the event. When the feed
// drops it (for falling behind), it resumes after the last change read.
func (n *Notifier) read(ctx context.Context, sub feed.Subscription, err error) {
	after := int64(-1)
	for {
		switch {
		case errors.Is(err, feed.ErrResumeTooOld):
			n.opts.Logger.Warn("notifications: the change log no longer holds what followed the last event read; going on from now", "after", after)
			after = -1
		case err != nil && (ctx.Err() != nil || errors.Is(err, feed.ErrFeedClosed)):
			return
		case err != nil:
			n.opts.Logger.Error("notifications: reading the change feed", "err", err)
			if pdp.Wait(ctx, time.Second) != nil {
				return
			}
		default:
			after = n.deliver(ctx, sub, after)
			err = sub.Err()
			sub.Close()
			if ctx.Err() != nil || errors.Is(err, feed.ErrFeedClosed) {
				return
			}
			n.opts.Logger.Warn("notifications: the change feed ended; resuming", "after", after, "err", err)
		}
		sub, err = n.opts.Feed.Subscribe(ctx, after)
	}
}

// deliver queues the changes of sub until it ends (or ctx does) and
// returns the last change's seq.
func (n *Notifier) deliver(ctx context.Context, sub feed.Subscription, after int64) int64 {
	defer context.AfterFunc(ctx, sub.Close)()
	for c := range sub.Changes() {
		after = c.Seq
		ev, err := eventOf(c, n.opts.ConsoleURL)
		if err != nil {
			n.opts.Logger.Error("notifications", "err", err)
			continue
		}
		if ev == nil {
			continue
		}
		for _, w := range n.workers {
			if w.sink.wants(ev) {
				w.enqueue(ev)
			}
		}
	}
	return after
}

// PolicyActivated tells the sinks that want it of a policy revision
// activated (policysource.Observer). A failed load is no event.
func (n *Notifier) PolicyActivated(p *pdp.Policy, err error) {
	if err != nil || p == nil {
		return
	}
	ev := policyEvent(p.Revision, p.Source, n.opts.ConsoleURL)
	for _, w := range n.workers {
		if w.sink.wants(ev) {
			w.enqueue(ev)
		}
	}
}

// worker sends one sink's events in order, one at a time.
type worker struct {
	sink    Sink
	deliver delivery
	n       *Notifier
	wake    chan struct{}

	mu    sync.Mutex
	queue []*Event
	bytes int
}

// enqueue queues ev unless the queue is full, in events or in bytes.
func (w *worker) enqueue(ev *Event) {
	w.mu.Lock()
	full := len(w.queue) >= w.sink.Queue || w.bytes+ev.size() > w.sink.QueueBytes
	if !full {
		w.queue = append(w.queue, ev)
		w.bytes += ev.size()
	}
	w.mu.Unlock()
	if full {
		w.n.opts.Observer.NotifyDropped(w.sink.Name, "queue_full")
		w.n.opts.Logger.Warn("notification dropped: the sink's queue is full", "sink", w.sink.Name, "event", ev.Event, "id", ev.ID)
		return
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *worker) next() *Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.queue) == 0 {
		return nil
	}
	ev := w.queue[0]
	w.queue[0] = nil
	w.queue = w.queue[1:]
	w.bytes -= ev.size()
	return ev
}

func (w *worker) run(ctx context.Context) {
	for {
		ev := w.next()
		if ev == nil {
			select {
			case <-ctx.Done():
				return
			case <-w.wake:
				continue
			}
		}
		w.send(ctx, ev)
	}
}

// send delivers ev, claiming it first where replicas share the store.
func (w *worker) send(ctx context.Context, ev *Event) {
	log := w.n.opts.Logger.With("sink", w.sink.Name, "event", ev.Event, "id", ev.ID)
	if claims := w.n.opts.Claims; claims != nil {
		mine, err := claims.ClaimDelivery(ctx, w.sink.Name, ev.ID)
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			// Sent rather than lost: another replica may send it too.
			log.Warn("notification: claiming the event failed; sending it anyway", "err", err)
		case !mine:
			return // another replica's
		}
	}
	if ev.Event == EventAsk && w.sink.AnswerLinks {
		linked, err := w.withLinks(ctx, ev)
		if err != nil {
			log.Error("notification: issuing its answer links failed; sending it without", "err", err)
		} else {
			ev = linked
		}
	}
	backoff := w.sink.Backoff
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, w.sink.Timeout)
		err := w.deliver.deliver(actx, ev)
		cancel()
		if err == nil {
			w.n.opts.Observer.NotifySent(w.sink.Name)
			return
		}
		if ctx.Err() != nil {
			return
		}
		w.n.opts.Observer.NotifyFailed(w.sink.Name)
		if attempt >= w.sink.MaxAttempts || errors.Is(err, errPermanent) {
			w.n.opts.Observer.NotifyDropped(w.sink.Name, "gave_up")
			log.Error("notification dropped after its last attempt", "attempts", attempt, "err", err)
			return
		}
		log.Warn("notification failed; trying again", "attempt", attempt, "in", backoff, "err", err)
		if pdp.Wait(ctx, backoff) != nil {
			return
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// delivery is how a kind of sink sends one event.
type delivery interface {
	deliver(ctx context.Context, ev *Event) error
}

func deliveryOf(s *Sink) (delivery, error) {
	switch s.Kind {
	case Webhook:
		return newWebhook(s), nil
	case Slack:
		return newSlack(s), nil
	case Command:
		return commandSink{argv: s.Command}, nil
	}
	return nil, fmt.Errorf("sink %s: kind %q", s.Name, s.Kind)
}

type nopObserver struct{}

func (nopObserver) NotifySent(string)            {}
func (nopObserver) NotifyFailed(string)          {}
func (nopObserver) NotifyDropped(string, string) {}

// withLinks is ev with one-time answer links: allow_once and deny, and
// the grants where the sink allows them and the call is grantable.
func (w *worker) withLinks(ctx context.Context, ev *Event) (*Event, error) {
	d := ev.decision
	answers := []string{api.AllowOnce, api.DenyAnswer}
	if w.sink.AllowGrants && d.Grantable {
		answers = append(answers, api.AllowSession, api.AllowProject)
	}
	tickets, err := w.n.opts.Tickets.IssueTickets(ctx, d.DecisionID, w.sink.Name, answers, d.Time.Add(w.n.opts.TicketTTL))
	if err != nil {
		return nil, err
	}
	linked := *ev
	linked.AnswerLinks = map[string]string{}
	for answer, t := range tickets {
		linked.AnswerLinks[answer] = w.n.opts.ConsoleURL + "/v1/decisions/" + url.PathEscape(d.DecisionID) + "/answer?ticket=" + url.QueryEscape(t)
	}
	return &linked, nil
}
