// Package notify tells people of asks where they are: it reads the PDP's
// change feed (pdp.Feed) and delivers each change a sink wants — an ask,
// an answer, an expiry, a level change — to that sink: a webhook (a
// signed JSON POST), a Slack incoming webhook, or a program run with the
// event on its standard input.
//
// Delivery is off the decision path: the feed never waits for this
// reader, and each sink has its own worker and a queue bounded in events
// and bytes, so a sink that is down or slow delays no decision and
// cannot grow the heap; what does not fit is dropped and counted. Each
// event is tried a few times with backoff, each attempt bounded by a
// timeout. Where replicas share one store, each event is claimed in the
// store by its change log sequence number before it is sent, under a
// lease renewed before each attempt, and marked done once sent: one
// replica sends it, and when that one dies before it is done another
// takes it over once the lease ran out. Delivery is at least once;
// receivers dedupe by the event's id.
package notify
