package pdp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolperm/pdp/api"
)

// Recorded is what one decision was judged on: the final input document
// of the call's session (its facts: session state, shell facts, the
// workspace verdict, the danger verdict) and, when the policy asked for
// the parent's decision, what the parent's was judged on. The audit trail
// keeps it so a candidate policy can judge the same call again.
type Recorded struct {
	Input  map[string]any `json:"input"`
	Parent *Recorded      `json:"parent,omitempty"`
	// Paths are the call's checked paths, CaseInsensitive how they were
	// matched and SessionPathRules the session's layer of path rules: a
	// candidate's own path rules are matched against them again.
	Paths            []CheckedPath `json:"paths,omitempty"`
	CaseInsensitive  bool          `json:"case_insensitive,omitempty"`
	SessionPathRules *PathRules    `json:"session_path_rules,omitempty"`
	// ProjectPathRules are the project layer's path rules (project.go).
	ProjectPathRules *PathRules `json:"project_path_rules,omitempty"`
	// Tree is the id of the root of the session's tree, whose flow
	// labels the call read (a replay in session order keeps them per
	// tree).
	Tree string `json:"tree,omitempty"`
}

// MaxRecordedBytes bounds what one event keeps for replay; an event whose
// documents encode larger is kept as not replayable, never truncated.
const MaxRecordedBytes = 64 << 10

// EncodeRecorded is the stored form of r, or nil when there is nothing to
// keep or it is over MaxRecordedBytes.
func EncodeRecorded(r *Recorded) []byte {
	if r == nil {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil || len(b) > MaxRecordedBytes {
		return nil
	}
	return b
}

// DecodeRecorded reads a stored Recorded.
func DecodeRecorded(b []byte) (*Recorded, error) {
	var r Recorded
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("recorded input: %w", err)
	}
	if r.Input == nil {
		return nil, fmt.Errorf("recorded input: no input document")
	}
	return &r, nil
}

// replayFacts supply what a candidate policy needs from the record: the
// danger verdict is the recorded one (already in the input); a call that
// now needs a verdict it never had gets what the engine gives without an
// assessor, DANGEROUS; the parent's decision is the candidate's own
// decision of the parent's recorded input.
type replayFacts struct {
	ev  evaluator
	rec *Recorded
}

func (f replayFacts) danger(context.Context) api.Danger {
	return api.Danger{Verdict: Dangerous, By: "unavailable"}
}

func (f replayFacts) parent(ctx context.Context) (api.Decision, *Recorded, error) {
	if f.rec.Parent == nil {
		return api.Decision{}, nil, fmt.Errorf("the parent's input was not recorded")
	}
	d, err := f.ev.replay(ctx, f.rec.Parent)
	return d, f.rec.Parent, err
}

func (ev evaluator) replay(ctx context.Context, rec *Recorded) (api.Decision, error) {
	in := make(map[string]any, len(rec.Input))
	for k, v := range rec.Input {
		if k != "parent_decision" { // the candidate's own parent decision replaces it
			in[k] = v
		}
	}
	if ws, ok := in["workspace"].(map[string]any); ok && rec.Paths != nil {
		// The candidate's path rules decide which rule each path meets.
		again := make(map[string]any, len(ws))
		for k, v := range ws {
			again[k] = v
		}
		again["paths"] = ev.p.pathFacts(WorkspaceVerdict{Paths: rec.Paths, CaseInsensitive: rec.CaseInsensitive}, rec.SessionPathRules, rec.ProjectPathRules)
		in["workspace"] = again
	}
	out, _, err := ev.resolve(ctx, in, false, replayFacts{ev: ev, rec: rec})
	return out.decision, err
}

// Replay evaluates a recorded decision again with this policy, without
// calling the assessor, and returns the policy's answer.
func (p *Policy) Replay(ctx context.Context, rec *Recorded) (api.Decision, error) {
	ev := evaluator{p: p, timeout: time.Second, obs: noObserver{}, now: time.Now}
	return ev.replay(ctx, rec)
}
