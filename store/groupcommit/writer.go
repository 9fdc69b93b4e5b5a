package groupcommit

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Writer.
type Options struct {
	// MaxBatch is the most items one transaction carries; the queue
	// holds four times as many.
	MaxBatch int
	// Closed is the error Submit returns once the writer is closed.
	Closed error
	// Observe, when set, is told of every transaction: its size, how
	// long it took and its error.
	Observe func(items int, took time.Duration, err error)
}

// Stats counts a Writer's work.
type Stats struct {
	Items        int64 // items committed
	Transactions int64 // transactions that carried them
	MaxBatch     int64 // most items in one transaction
	Errors       int64 // transactions that failed
}

type pending[T any] struct {
	item T
	done chan error
	// deadline is the submitter's (zero: none); an item past it when its
	// batch starts is answered with the deadline's error, unwritten.
	deadline time.Time
}

// Writer owns the writes of items of type T.
type Writer[T any] struct {
	write    func(ctx context.Context, batch []T) error
	opts     Options
	queue    chan pending[T]
	closeMu  sync.RWMutex
	closed   bool
	finished chan struct{}

	items, txns, maxBatch, errors atomic.Int64
}

// New starts a writer whose write commits a batch in one transaction
// and returns its error; every item of the batch is answered with it.
// write's context ends at the nearest deadline of the batch's
// submitters: past it the transaction must fail whole, so no item is
// answered late and nothing of a refused item is written. write must not
// keep the slice: the writer reuses it.
func New[T any](write func(ctx context.Context, batch []T) error, opts Options) *Writer[T] {
	w := &Writer[T]{write: write, opts: opts, queue: make(chan pending[T], 4*opts.MaxBatch), finished: make(chan struct{})}
	go w.run()
	return w
}

// Submit queues item and returns once the transaction carrying it has
// committed (nil) or failed (its error). A caller that gives up before
// the item is queued gets ctx's error; ctx's deadline bounds the
// transaction that carries it.
func (w *Writer[T]) Submit(ctx context.Context, item T) error {
	p := pending[T]{item: item, done: make(chan error, 1)}
	p.deadline, _ = ctx.Deadline()
	w.closeMu.RLock()
	if w.closed {
		w.closeMu.RUnlock()
		return w.opts.Closed
	}
	select {
	case w.queue <- p:
	case <-ctx.Done():
		w.closeMu.RUnlock()
		return ctx.Err()
	}
	w.closeMu.RUnlock()
	// Once queued the item is written whatever the caller does; wait for
	// the outcome so an answer is never sent before its item commits.
	return <-p.done
}

// Close stops taking items, writes those queued, and returns when done.
func (w *Writer[T]) Close() {
	w.closeMu.Lock()
	if !w.closed {
		w.closed = true
		close(w.queue)
	}
	w.closeMu.Unlock()
	<-w.finished
}

// Stats returns the counts so far.
func (w *Writer[T]) Stats() Stats {
	return Stats{Items: w.items.Load(), Transactions: w.txns.Load(), MaxBatch: w.maxBatch.Load(), Errors: w.errors.Load()}
}

func (w *Writer[T]) run() {
	defer close(w.finished)
	batch := make([]pending[T], 0, w.opts.MaxBatch)
	items := make([]T, 0, w.opts.MaxBatch)
	for first := range w.queue {
		batch = append(batch[:0], first)
		if len(w.queue) == 0 {
			// A submitter that was just made runnable is usually about
			// to queue its item: let it, so the commit carries it too.
			// Under load this doubles the items per transaction
			// (docs/performance.md); alone it costs a yield that returns
			// at once.
			runtime.Gosched()
		}
	fill:
		for len(batch) < w.opts.MaxBatch {
			select {
			case p, ok := <-w.queue:
				if !ok {
					break fill
				}
				batch = append(batch, p)
			default:
				break fill
			}
		}
		batch = w.dropExpired(batch)
		if len(batch) == 0 {
			continue
		}
		items = items[:0]
		var deadline time.Time
		for _, p := range batch {
			items = append(items, p.item)
			if !p.deadline.IsZero() && (deadline.IsZero() || p.deadline.Before(deadline)) {
				deadline = p.deadline
			}
		}
		err := w.commit(deadline, items)
		for _, p := range batch {
			p.done <- err
		}
	}
}

// dropExpired answers the items whose deadline has passed (they waited
// behind a slow transaction) and returns the others.
func (w *Writer[T]) dropExpired(batch []pending[T]) []pending[T] {
	now := time.Now()
	kept := batch[:0]
	for _, p := range batch {
		if !p.deadline.IsZero() && !now.Before(p.deadline) {
			p.done <- context.DeadlineExceeded
			continue
		}
		kept = append(kept, p)
	}
	return kept
}

func (w *Writer[T]) commit(deadline time.Time, items []T) error {
	ctx := context.Background()
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	start := time.Now()
	err := w.write(ctx, items)
	if w.opts.Observe != nil {
		w.opts.Observe(len(items), time.Since(start), err)
	}
	if err != nil {
		w.errors.Add(1)
		return err
	}
	n := int64(len(items))
	w.items.Add(n)
	w.txns.Add(1)
	for {
		cur := w.maxBatch.Load()
		if n <= cur || w.maxBatch.CompareAndSwap(cur, n) {
			break
		}
	}
	return nil
}
