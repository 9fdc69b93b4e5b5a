package pdp

import (
	"context"
	"errors"
	"time"
)

// Ticket is a one-time answer link's right: one answer to one decision,
// recorded with the notification sink's name as its channel, until it
// expires (with the ask) or is used.
type Ticket struct {
	DecisionID string
	Answer     string
	Sink       string
	Expires    time.Time
}

// Why a ticket is refused.
var (
	// ErrTicketForged: no such ticket, or one for another decision.
	ErrTicketForged = errors.New("the answer link is not one this server issued for this decision")
	// ErrTicketUsed: the ticket answered already.
	ErrTicketUsed = errors.New("the answer link was used already")
	// ErrTicketExpired: the ticket's ask expired.
	ErrTicketExpired = errors.New("the answer link has expired")
)

// TicketStore keeps the tickets of answer links: only their hashes, so
// the store's contents answer no ask.
type TicketStore interface {
	// IssueTickets makes a ticket for each answer to the decision, for the
	// sink, until expires; it returns them by answer.
	IssueTickets(ctx context.Context, decisionID, sink string, answers []string, expires time.Time) (map[string]string, error)
	// PeekTicket says what the ticket would answer, without using it.
	PeekTicket(ctx context.Context, ticket, decisionID string) (Ticket, error)
	// UseTicket uses the ticket, once: of two uses at once one wins, the
	// other is ErrTicketUsed.
	UseTicket(ctx context.Context, ticket, decisionID string) (Ticket, error)
}
