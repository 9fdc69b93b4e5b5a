package pdp

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/toolperm/pdp/api"
)

// OutcomeStore finds decisions by the runtime's id of the call and
// records what became of an ask.
type OutcomeStore interface {
	// DecisionsByToolUse returns the decisions made for a call with this
	// runtime id, newest first.
	DecisionsByToolUse(ctx context.Context, toolUseID string) ([]api.Event, error)
	// RecordOutcome records a runtime's outcome on an ask, apart from the
	// person's answer (which it neither sets nor needs), naming the token
	// that reported it; it creates no grant and wakes no one waiting for
	// a person's answer. ErrConflict when the decision is not an ask or
	// already has an outcome.
	RecordOutcome(ctx context.Context, id, answer, channel, by string) (api.Event, error)
}

// Outcomes records what a runtime says became of an ask it showed in its
// own prompt (Claude Code runs the tool, so a person there allowed it).
// It is a record of what the runtime did, never a permission: only
// allow_once or deny, kept apart from the person's answer (the ask stays
// pending, and a person may still answer it), never a grant, only on an
// ask of a session the caller may use, under the runtime's channel, and
// the record names the caller's token.
type Outcomes struct {
	Sessions *Sessions
	Store    OutcomeStore
}

// personChannels are the channels people answer through here: the API's
// default, the console, `pdp terminal`, and the desktop and CLI names
// the documentation gives. An outcome cannot take one, nor any other
// word that names a person, so no record of a runtime reads as a
// person's.
var personChannels = []string{"api", "cli", "console", "desktop", "terminal", "person", "user", "human"}

// runtimeChannel is the form of a runtime's name: lower-case ASCII, so
// no look-alike of a person's channel gets through.
var runtimeChannel = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// OutcomeChannel is the channel an outcome is recorded with: the
// runtime's name, api.RuntimeChannel when it gives none. A person's
// channel, or a name that is not a plain runtime name, is bad input.
func OutcomeChannel(channel string) (string, error) {
	if channel == "" {
		return api.RuntimeChannel, nil
	}
	if !runtimeChannel.MatchString(channel) {
		return "", invalid("invalid_channel", "an outcome's channel names the runtime: 1-64 of a-z, 0-9, '.', '_', '-', got %q", truncate(channel))
	}
	for _, p := range personChannels {
		if strings.EqualFold(channel, p) {
			return "", invalid("invalid_channel", "%q is a person's channel; an outcome is recorded under the runtime's (for example %q)", channel, api.RuntimeChannel)
		}
	}
	return channel, nil
}

// Record records answer as the outcome of the ask the call with
// toolUseID got. A call the caller may not read is answered as an
// unknown one.
func (o *Outcomes) Record(ctx context.Context, toolUseID, answer, channel string, who Caller) (api.Event, error) {
	switch answer {
	case api.AllowOnce, api.DenyAnswer:
	default:
		return api.Event{}, invalid("invalid_outcome", "an outcome is allow_once or deny, got %q", truncate(answer))
	}
	channel, err := OutcomeChannel(channel)
	if err != nil {
		return api.Event{}, err
	}
	if toolUseID == "" || len(toolUseID) > 256 {
		return api.Event{}, invalid("invalid_tool_use_id", "tool_use_id must be 1-256 characters")
	}
	notFound := fmt.Errorf("no decision for tool use %q: %w", truncate(toolUseID), ErrNotFound)
	found, err := o.Store.DecisionsByToolUse(ctx, toolUseID)
	if err != nil {
		return api.Event{}, err
	}
	// Several runtimes may send the same id: only the caller's own
	// decisions count, and of those an ask without an outcome first.
	var mine []api.Event
	var refused error
	for _, d := range found {
		err := o.Sessions.MayRead(ctx, d.SessionID, who, notFound)
		var r *Refusal
		if errors.As(err, &r) {
			refused = err
			continue
		} else if err != nil {
			return api.Event{}, err
		}
		mine = append(mine, d)
	}
	if len(mine) == 0 {
		if refused != nil {
			// Recorded as a refusal, answered as an unknown id.
			return api.Event{}, refused
		}
		return api.Event{}, notFound
	}
	target := mine[0]
	for _, d := range mine {
		if d.Decision.Decision == api.Ask && d.Outcome == nil {
			target = d
			break
		}
	}
	return o.Store.RecordOutcome(ctx, target.DecisionID, answer, channel, who.Name)
}
