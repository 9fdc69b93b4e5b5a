package pdp

import (
	"context"
	"errors"
	"fmt"
)

// OutcomeStore finds decisions by the runtime's id of the call and
// records what became of an ask.
type OutcomeStore interface {
	// DecisionsByToolUse returns the decisions made for a call with this
	// runtime id, newest first.
	DecisionsByToolUse(ctx context.Context, toolUseID string) ([]DecisionEvent, error)
	// RecordOutcome records answer on an unanswered ask, naming the token
	// that reported it, and creates no grant; ErrConflict when the
	// decision is not an ask or is already answered.
	RecordOutcome(ctx context.Context, id, answer, channel, by string) (DecisionEvent, error)
}

// Outcomes records what a runtime says became of an ask it showed in its
// own prompt (Claude Code runs the tool, so a person there allowed it).
// It is a record, not a permission: only allow_once or deny, never a
// grant, only on an unanswered ask of a session the caller may use, and
// the record names the caller's token.
type Outcomes struct {
	Sessions *Sessions
	Store    OutcomeStore
}

// Record records answer on the ask the call with toolUseID got. A call
// the caller may not read is answered as an unknown one.
func (o *Outcomes) Record(ctx context.Context, toolUseID, answer, channel string, who Caller) (DecisionEvent, error) {
	switch answer {
	case AllowOnce, DenyAnswer:
	default:
		return DecisionEvent{}, invalid("invalid_outcome", "an outcome is allow_once or deny, got %q", truncate(answer))
	}
	if toolUseID == "" || len(toolUseID) > 256 {
		return DecisionEvent{}, invalid("invalid_tool_use_id", "tool_use_id must be 1-256 characters")
	}
	notFound := fmt.Errorf("no decision for tool use %q: %w", truncate(toolUseID), ErrNotFound)
	found, err := o.Store.DecisionsByToolUse(ctx, toolUseID)
	if err != nil {
		return DecisionEvent{}, err
	}
	// Several runtimes may send the same id: only the caller's own
	// decisions count, and of those an unanswered ask first.
	var mine []DecisionEvent
	var refused error
	for _, d := range found {
		err := o.Sessions.MayRead(ctx, d.SessionID, who, notFound)
		var r *Refusal
		if errors.As(err, &r) {
			refused = err
			continue
		} else if err != nil {
			return DecisionEvent{}, err
		}
		mine = append(mine, d)
	}
	if len(mine) == 0 {
		if refused != nil {
			// Recorded as a refusal, answered as an unknown id.
			return DecisionEvent{}, refused
		}
		return DecisionEvent{}, notFound
	}
	target := mine[0]
	for _, d := range mine {
		if d.Decision.Decision == Ask && d.Answer == nil {
			target = d
			break
		}
	}
	return o.Store.RecordOutcome(ctx, target.DecisionID, answer, channel, who.Name)
}
