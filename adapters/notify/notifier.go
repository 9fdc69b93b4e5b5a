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

// Claims is a store shared by replicas that hands each event to one of
// them at a time, under a lease: the replica that claims it sends it,
// renewing the lease before each attempt, and marks it done; an event
// whose lease ran out undone (its replica died) is claimed again by
// another. Delivery is at least once: a replica that died after the
// receiver took the event but before it marked it done has it sent
// again, with the same id.
type Claims interface {
	// ClaimDelivery claims the sink's event seq for lease: mine when it
	// is this replica's to send; else until is when the holder's lease
	// ends (ask again then), or zero when it is done.
	ClaimDelivery(ctx context.Context, sink string, seq int64, lease time.Duration) (mine bool, until time.Time, err error)
	// RenewDelivery extends this replica's claim to lease from now:
	// false when it is no longer its own.
	RenewDelivery(ctx context.Context, sink string, seq int64, lease time.Duration) (bool, error)
	// DeliveryDone marks this replica's claim done: sent, or given up.
	DeliveryDone(ctx context.Context, sink string, seq int64) error
}

// leaseSlack is added to each lease beyond the attempt and the wait
// after it that it covers: the time to claim, to issue answer links, and
// the clocks of replicas that differ by a few seconds.
const leaseSlack = 5 * time.Second

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
	// later are the events another replica holds, to claim again when
	// its lease ends if it has not marked them done by then.
	later []recheck
}

type recheck struct {
	ev *Event
	at time.Time
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

// next is the next event to send: one due to be claimed again, else the
// queue's first; nil and the time of the next recheck (zero: none) when
// there is none yet.
func (w *worker) next(now time.Time) (*Event, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var soonest time.Time
	for i, r := range w.later {
		if !r.at.After(now) {
			w.later = append(w.later[:i], w.later[i+1:]...)
			return r.ev, time.Time{}
		}
		if soonest.IsZero() || r.at.Before(soonest) {
			soonest = r.at
		}
	}
	if len(w.queue) == 0 {
		return nil, soonest
	}
	ev := w.queue[0]
	w.queue[0] = nil
	w.queue = w.queue[1:]
	w.bytes -= ev.size()
	return ev, time.Time{}
}

// recheckLater keeps ev, which another replica holds until until, to
// claim it again then. At most the sink's queue length are kept; beyond
// that an event is left to the replica that holds it.
func (w *worker) recheckLater(ev *Event, until time.Time) {
	at := until
	if soon := time.Now().Add(time.Second); at.Before(soon) {
		at = soon // a lease that ended by this clock but not the holder's
	}
	w.mu.Lock()
	full := len(w.later) >= w.sink.Queue
	if !full {
		w.later = append(w.later, recheck{ev: ev, at: at})
	}
	w.mu.Unlock()
	if full {
		w.n.opts.Logger.Warn("notification: too many events held by other replicas to watch; this one is left to its replica", "sink", w.sink.Name, "event", ev.Event, "id", ev.ID)
	}
}

func (w *worker) run(ctx context.Context) {
	for {
		ev, at := w.next(time.Now())
		if ev == nil {
			var due <-chan time.Time
			var timer *time.Timer
			if !at.IsZero() {
				timer = time.NewTimer(time.Until(at))
				due = timer.C
			}
			select {
			case <-ctx.Done():
			case <-w.wake:
			case <-due:
			}
			if timer != nil {
				timer.Stop()
			}
			if ctx.Err() != nil {
				return
			}
			continue
		}
		w.send(ctx, ev)
	}
}

// send delivers ev, claiming it first where replicas share the store:
// the claim's lease covers each attempt and the wait after it, renewed
// before the next, and the claim is marked done once the event is sent
// or given up.
func (w *worker) send(ctx context.Context, ev *Event) {
	log := w.n.opts.Logger.With("sink", w.sink.Name, "event", ev.Event, "id", ev.ID)
	backoff := w.sink.Backoff
	lease := func() time.Duration { return w.sink.Timeout + backoff + leaseSlack }
	claims := w.n.opts.Claims
	if claims != nil {
		mine, until, err := claims.ClaimDelivery(ctx, w.sink.Name, ev.ID, lease())
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			// Sent rather than lost: another replica may send it too.
			log.Warn("notification: claiming the event failed; sending it anyway", "err", err)
			claims = nil
		case !mine && !until.IsZero():
			w.recheckLater(ev, until) // another replica's, unless it dies
			return
		case !mine:
			return // done by another replica
		}
	}
	done := func() {
		if claims == nil {
			return
		}
		if err := claims.DeliveryDone(ctx, w.sink.Name, ev.ID); err != nil && ctx.Err() == nil {
			log.Warn("notification: marking it done failed; another replica may send it again", "err", err)
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
	for attempt := 1; ; attempt++ {
		if attempt > 1 && claims != nil {
			held, err := claims.RenewDelivery(ctx, w.sink.Name, ev.ID, lease())
			switch {
			case err != nil && ctx.Err() != nil:
				return
			case err != nil:
				log.Warn("notification: renewing its claim failed; trying it anyway", "err", err)
			case !held:
				log.Warn("notification: its claim lapsed and another replica took it over", "attempt", attempt)
				return
			}
		}
		actx, cancel := context.WithTimeout(ctx, w.sink.Timeout)
		err := w.deliver.deliver(actx, ev)
		cancel()
		if err == nil {
			w.n.opts.Observer.NotifySent(w.sink.Name)
			done()
			return
		}
		if ctx.Err() != nil {
			return // unmarked: its lease runs out and another replica sends it
		}
		w.n.opts.Observer.NotifyFailed(w.sink.Name)
		if attempt >= w.sink.MaxAttempts || errors.Is(err, errPermanent) {
			w.n.opts.Observer.NotifyDropped(w.sink.Name, "gave_up")
			log.Error("notification dropped after its last attempt", "attempts", attempt, "err", err)
			done()
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
	switch {
	case w.sink.AllowGrants && d.Grantable:
		answers = append(answers, api.AllowSession, api.AllowProject)
	case w.sink.AllowGrants && d.Rule == api.FlowRule:
		// allow_session accepts the Rule of Two's three labels for the
		// session; nothing is granted, and never for a project.
		answers = append(answers, api.AllowSession)
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
