package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/toolperm/pdp/adapters/notify"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/postgres"
	"github.com/toolperm/pdp/store/sqlite"
)

// The stores claim notifications under a lease (notify.Claims): a
// store that lost the methods would silently send every event from
// every replica.
var (
	_ notify.Claims = (*postgres.Store)(nil)
	_ notify.Claims = (*sqlite.Store)(nil)
)

// newNotifier builds the notifications cfg.Notify describes, or nil
// without sinks. A store shared by replicas hands each event to one of
// them at a time: the one that claims it, or another once that one's
// lease runs out undone.
func newNotifier(cfg config.Config, store Store, changes feed.Feed, observer notify.Observer, logger *slog.Logger) (*notify.Notifier, error) {
	if len(cfg.Notify.Sinks) == 0 {
		return nil, nil
	}
	opts := notify.Options{Feed: changes, Observer: observer, Logger: logger,
		ConsoleURL: strings.TrimSuffix(cfg.Notify.ConsoleURL, "/")}
	if opts.ConsoleURL == "" {
		opts.ConsoleURL = "http://" + cfg.Server.Addr
	}
	// An answer link expires with its ask; where asks never expire, after
	// a week.
	opts.TicketTTL = cfg.Asks.ExpireAfter
	if opts.TicketTTL <= 0 {
		opts.TicketTTL = 7 * 24 * time.Hour
	}
	if tickets, ok := store.(notify.TicketIssuer); ok {
		opts.Tickets = tickets
	}
	if _, shared := store.(changeSource); shared {
		if claims, ok := store.(notify.Claims); ok {
			opts.Claims = claims
		}
	}
	if m, ok := observer.(interface{ NotifySinks([]string) }); ok {
		names := make([]string, 0, len(cfg.Notify.Sinks))
		for _, c := range cfg.Notify.Sinks {
			names = append(names, c.Name)
		}
		m.NotifySinks(names)
	}
	for _, c := range cfg.Notify.Sinks {
		s, err := sinkOf(c, os.Getenv)
		if err != nil {
			return nil, fmt.Errorf("config notify.sinks %s: %w", c.Name, err)
		}
		opts.Sinks = append(opts.Sinks, s)
	}
	n, err := notify.New(opts)
	if err != nil {
		return nil, fmt.Errorf("config notify.sinks: %w", err)
	}
	logger.Info("notifications on", "sinks", len(opts.Sinks), "console", opts.ConsoleURL)
	return n, nil
}

// startNotifier starts n (subscribed when it returns); stop ends it
// and waits, so it is called before the store closes.
func startNotifier(ctx context.Context, n *notify.Notifier) (stop func()) {
	if n == nil {
		return func() {}
	}
	return n.Start(ctx)
}

// policyObservers tells each of its observers of a policy activation.
type policyObservers []policysource.Observer

func (o policyObservers) PolicyActivated(p *pdp.Policy, err error) {
	for _, each := range o {
		each.PolicyActivated(p, err)
	}
}
