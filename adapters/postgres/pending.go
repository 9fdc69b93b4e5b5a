package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolperm/pdp/pdp"
)

// errNotYet is the error of what the PostgreSQL store does not keep yet.
var errNotYet = errors.New("not supported on PostgreSQL yet")

// DecisionsByToolUse is not supported on PostgreSQL yet.
func (s *Store) DecisionsByToolUse(ctx context.Context, toolUseID string) ([]pdp.DecisionEvent, error) {
	return nil, fmt.Errorf("finding a decision by tool use id: %w", errNotYet)
}

// RecordOutcome is not supported on PostgreSQL yet.
func (s *Store) RecordOutcome(ctx context.Context, id, answer, channel, by string) (pdp.DecisionEvent, error) {
	return pdp.DecisionEvent{}, fmt.Errorf("recording an outcome: %w", errNotYet)
}

// ChangesAfter: the change log is empty on PostgreSQL yet.
func (s *Store) ChangesAfter(ctx context.Context, after int64, limit int) ([]pdp.Change, error) {
	return nil, nil
}

// ChangeBounds: the change log is empty on PostgreSQL yet.
func (s *Store) ChangeBounds(ctx context.Context) (first, last int64, err error) { return 0, 0, nil }
