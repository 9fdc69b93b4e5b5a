package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/store/sqlstore"
)

// writeTx sends the batch's inserts, and the change log entries of its
// asks, in one round trip run as one implicit transaction: the server
// commits it at the batch's end (synchronous_commit makes that durable)
// and only then answers, after which every caller of the batch is
// answered. An error anywhere rolls all of it back. ctx carries the
// batch's deadline (its callers' nearest), which the server enforces too:
// statement_timeout and lock_timeout for this transaction alone.
func writeTx(ctx context.Context, pool *pgxpool.Pool, timeout time.Duration, batch []sqlstore.PendingEvent) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var b pgx.Batch
	if d, ok := ctx.Deadline(); ok {
		ms := strconv.FormatInt(max(time.Until(d).Milliseconds(), 1), 10)
		b.Queue(`SELECT set_config('statement_timeout', $1, true), set_config('lock_timeout', $1, true)`, ms)
	}
	insert := sqlstore.Numbered(sqlstore.InsertDecision)
	for _, p := range batch {
		args, err := dialect.EventArgs(p)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		b.Queue(insert, args...)
	}
	// The labels in one order on every replica (root, then label): two
	// batches adding the same ones lock them in the same order, never
	// crosswise.
	type label struct {
		root string
		l    api.FlowLabel
	}
	var labels []label
	for _, p := range batch {
		for _, l := range p.Event.Labels {
			labels = append(labels, label{p.Event.LabelRoot, l})
		}
	}
	slices.SortStableFunc(labels, func(a, b label) int {
		return cmp.Or(strings.Compare(a.root, b.root), strings.Compare(a.l.Label, b.l.Label))
	})
	addLabel := sqlstore.Numbered(sqlstore.InsertLabel)
	for _, l := range labels {
		b.Queue(addLabel, dialect.LabelArgs(l.root, l.l)...)
	}
	// Asks go to the change log in the same transaction, last: the
	// counter's lock is held only from there to the commit.
	if err := queueChanges(&b, sqlstore.Asks(batch)...); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := pool.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("audit: writing %d decisions: %w", len(batch), err)
	}
	return nil
}

// noNUL replaces NUL characters, which PostgreSQL's text refuses: one
// event carrying one must not fail the batch of everyone else's.
func noNUL(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}
