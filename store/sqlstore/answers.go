package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/pdp"
)

// AnswerDecision records a person's answer to an ask and, for
// allow_session or allow_project, creates the grants on the root of the
// session's tree, in one transaction; by names who answered (the
// person's token). pdp.ErrConflict when the decision
// was not an ask or is already answered; pdp.ErrNotGrantable for a grant
// on a call without a fingerprint (nothing is written then).
func (s *Store) AnswerDecision(ctx context.Context, id, answer, channel string, by api.Answerer) (api.Event, error) {
	return s.answer(ctx, id, api.Answer{Answer: answer, Channel: channel, AnsweredBy: by.Name, AnsweredBySubject: by.Subject}, "recording the answer")
}

// RecordOutcome records what a runtime reports became of an ask
// (allow_once or deny) in the decision's outcome columns, naming the
// token that reported it. The person's answer is neither set nor read:
// the ask stays pending, a person may still answer it, and no one waiting
// for a person's answer is woken. It never creates a grant.
// pdp.ErrConflict when the decision is not an ask or already has an
// outcome (a conditional UPDATE, so of two at once exactly one is kept).
func (s *Store) RecordOutcome(ctx context.Context, id, answer, channel, by string) (api.Event, error) {
	const doing = "recording the outcome"
	if answer != api.AllowOnce && answer != api.DenyAnswer {
		return api.Event{}, fmt.Errorf("outcome %q is not allow_once or deny: %w", answer, pdp.ErrConflict)
	}
	tx, err := s.Write.Begin(ctx)
	if err != nil {
		return api.Event{}, fmt.Errorf("%s: %w", doing, err)
	}
	defer tx.Rollback(context.Background())
	now := s.Now()
	n, err := tx.Exec(ctx, `UPDATE decisions SET outcome = ?, outcome_channel = ?, outcome_at = ?, outcome_by = ?
		WHERE id = ? AND decision = 'ask' AND outcome IS NULL`, answer, channel, s.Time(now), by, id)
	if err != nil {
		return api.Event{}, fmt.Errorf("%s: %w", doing, err)
	}
	rec, err := decision(ctx, tx, id)
	if err != nil {
		return rec, err
	}
	if n == 0 {
		if rec.Decision.Decision != api.Ask {
			return rec, fmt.Errorf("decision %s was %s, not ask: %w", id, rec.Decision.Decision, pdp.ErrConflict)
		}
		return rec, fmt.Errorf("decision %s already has an outcome: %w", id, pdp.ErrConflict)
	}
	if err := s.AddChanges(ctx, tx, Change{Time: now, Kind: feed.ChangeOutcome, SessionID: rec.SessionID, DecisionID: id}); err != nil {
		return rec, err
	}
	labelled := false
	if answer == api.AllowOnce {
		// The runtime ran the call (a person allowed it in the agent's
		// own prompt): its labels are the tree's. An outcome only ever
		// adds labels; a denied call adds none.
		if labelled, err = s.addLabels(ctx, tx, rec, nil, now); err != nil {
			return rec, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return rec, fmt.Errorf("%s: %w", doing, err)
	}
	if labelled {
		s.changed()
	}
	return rec, nil
}

// answer records a person's answer in one transaction. The answer is a
// conditional UPDATE (… WHERE answer IS NULL), so of two answers at
// once, on any writer, exactly one is recorded: the other is
// pdp.ErrConflict, as is an answer to a decision that was not an ask. An
// outcome recorded before does not count: it is no answer. The change
// log has the answer in the same transaction.
func (s *Store) answer(ctx context.Context, id string, a api.Answer, doing string) (api.Event, error) {
	tx, err := s.Write.Begin(ctx)
	if err != nil {
		return api.Event{}, fmt.Errorf("%s: %w", doing, err)
	}
	defer tx.Rollback(context.Background())
	now := s.Now()
	n, err := tx.Exec(ctx, `UPDATE decisions SET answer = ?, answer_channel = ?, answered_at = ?, answer_token = ?, answer_subject = ?
		WHERE id = ? AND decision = 'ask' AND answer IS NULL`, a.Answer, a.Channel, s.Time(now), orNull(a.AnsweredBy), orNull(a.AnsweredBySubject), id)
	if err != nil {
		return api.Event{}, fmt.Errorf("%s: %w", doing, err)
	}
	rec, err := decision(ctx, tx, id)
	if err != nil {
		return rec, err
	}
	if n == 0 {
		if rec.Decision.Decision != api.Ask {
			return rec, fmt.Errorf("decision %s was %s, not ask: %w", id, rec.Decision.Decision, pdp.ErrConflict)
		}
		answered := "already"
		if rec.Answer != nil {
			answered = rec.Answer.Answer
		}
		if answered == api.Expired {
			return rec, fmt.Errorf("decision %s: %w", id, pdp.ErrExpired)
		}
		return rec, fmt.Errorf("decision %s was already answered %s: %w", id, answered, pdp.ErrConflict)
	}
	granted := a.Answer == api.AllowSession || a.Answer == api.AllowProject
	var accepted []string
	if rec.Rule == pdp.FlowRule && granted {
		// The flow rule's ask is no command to grant: allow_session
		// accepts all three labels for the session's tree.
		if a.Answer == api.AllowProject {
			return rec, fmt.Errorf("%w: the Rule of Two is accepted for one session (allow_session), never for a project", pdp.ErrNotGrantable)
		}
		accepted, granted = []string{api.LabelAccepted}, false
	}
	if granted {
		if err := s.grant(ctx, tx, &rec, a.Answer, now); err != nil {
			return rec, err
		}
	}
	labelled := false
	if (&api.Answer{Answer: a.Answer}).Allows() {
		// A person let the call run: its labels are the tree's.
		if labelled, err = s.addLabels(ctx, tx, rec, accepted, now); err != nil {
			return rec, err
		}
	}
	if err := s.AddChanges(ctx, tx, Change{Time: now, Kind: feed.ChangeAnswer, SessionID: rec.SessionID, DecisionID: id}); err != nil {
		return rec, err
	}
	if s.Answered != nil {
		if err := s.Answered(ctx, tx, id); err != nil {
			return rec, fmt.Errorf("%s: %w", doing, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return rec, fmt.Errorf("%s: %w", doing, err)
	}
	s.answerCommitted(id)
	if granted || labelled {
		s.changed()
	}
	return rec, nil
}

// grant stores the grants of an answer on the root of rec's session tree
// and links the first to rec.
func (s *Store) grant(ctx context.Context, tx Tx, rec *api.Event, answer string, now time.Time) error {
	root, err := s.FindRoot(ctx, tx, rec.SessionID)
	if err != nil {
		return err
	}
	gid, err := s.grantParts(ctx, tx, *rec, root, answer, now)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE decisions SET grant_id = ? WHERE id = ?`, gid, rec.DecisionID); err != nil {
		return fmt.Errorf("recording the answer: %w", err)
	}
	rec.Answer.GrantID = gid
	return nil
}

// orNull is NULL for "".
func orNull(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}
