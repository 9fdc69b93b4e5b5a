package sqlstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/storerows"
)

// IssueTickets makes one ticket per answer: 32 random bytes, of which
// only the SHA-256 is stored.
func (s *Store) IssueTickets(ctx context.Context, decisionID, sink string, answers []string, expires time.Time) (map[string]string, error) {
	tx, err := s.Write.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("issuing answer links: %w", err)
	}
	defer tx.Rollback(context.Background())
	now := s.Now()
	if _, err := tx.Exec(ctx, `DELETE FROM answer_tickets WHERE expires < ?`, s.Time(now)); err != nil {
		return nil, fmt.Errorf("issuing answer links: %w", err)
	}
	out := map[string]string{}
	for _, answer := range answers {
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return nil, err
		}
		ticket := base64.RawURLEncoding.EncodeToString(raw)
		if _, err := tx.Exec(ctx, `INSERT INTO answer_tickets (hash, decision_id, answer, sink, expires) VALUES (?, ?, ?, ?, ?)`,
			ticketHash(ticket), decisionID, answer, sink, s.Time(expires)); err != nil {
			return nil, fmt.Errorf("issuing answer links: %w", err)
		}
		out[answer] = ticket
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("issuing answer links: %w", err)
	}
	return out, nil
}

// PeekTicket reads the ticket without using it.
func (s *Store) PeekTicket(ctx context.Context, ticket, decisionID string) (pdp.Ticket, error) {
	return s.readTicket(ctx, s.Read, ticket, decisionID)
}

// UseTicket marks the ticket used by a conditional UPDATE: of two uses at
// once exactly one changes the row.
func (s *Store) UseTicket(ctx context.Context, ticket, decisionID string) (pdp.Ticket, error) {
	now := s.Now()
	n, err := s.Write.Exec(ctx, `UPDATE answer_tickets SET used_at = ? WHERE hash = ? AND decision_id = ? AND used_at IS NULL AND expires > ?`,
		s.Time(now), ticketHash(ticket), decisionID, s.Time(now))
	if err != nil {
		return pdp.Ticket{}, fmt.Errorf("using an answer link: %w", err)
	}
	t, err := s.readTicket(ctx, s.Write, ticket, decisionID)
	if n == 1 {
		return t, nil
	}
	if err == nil {
		err = pdp.ErrTicketUsed // used between the UPDATE and the read
	}
	return t, err
}

func (s *Store) readTicket(ctx context.Context, db Conn, ticket, decisionID string) (pdp.Ticket, error) {
	t := pdp.Ticket{DecisionID: decisionID}
	var expires, used storerows.Time
	var forDecision string
	err := db.QueryRow(ctx, `SELECT decision_id, answer, sink, expires, used_at FROM answer_tickets WHERE hash = ?`, ticketHash(ticket)).
		Scan(&forDecision, &t.Answer, &t.Sink, &expires, &used)
	switch {
	case errors.Is(err, ErrNoRows):
		return pdp.Ticket{}, pdp.ErrTicketForged
	case err != nil:
		return pdp.Ticket{}, fmt.Errorf("reading an answer link: %w", err)
	case forDecision != decisionID:
		return pdp.Ticket{}, pdp.ErrTicketForged
	}
	t.Expires = expires.T
	switch {
	case used.Valid:
		return t, pdp.ErrTicketUsed
	case !s.Now().Before(t.Expires):
		return t, pdp.ErrTicketExpired
	}
	return t, nil
}

func ticketHash(ticket string) string {
	sum := sha256.Sum256([]byte(ticket))
	return hex.EncodeToString(sum[:])
}
