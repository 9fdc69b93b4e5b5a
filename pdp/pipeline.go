package pdp

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// maxRounds bounds how often the policy may ask for more facts in one
// decision: the danger verdict and the parent's decision, once each.
const maxRounds = 3

// pipeline holds what one decision computes once and shares between the
// session and its parents: the shell facts and the danger verdict.
type pipeline struct {
	e       *Engine
	p       *Policy
	call    Call
	command string
	shell   map[string]any
	danger  *Danger
}

func (e *Engine) evaluate(ctx context.Context, p *Policy, call Call) (Decision, error) {
	pl := &pipeline{e: e, p: p, call: call}
	if err := pl.parseCommand(ctx); err != nil {
		return Decision{}, err
	}
	out, err := pl.run(ctx, withDefaults(call.Session), call.Explain)
	if err != nil {
		return Decision{}, err
	}
	return out.decision, nil
}

// parseCommand turns args.command (or args.argv, when there is no
// command string) into shell facts. A command over the shell limits, or
// whose request ends while it is parsed, is not parsed: never grantable.
func (pl *pipeline) parseCommand(ctx context.Context) error {
	args := pl.call.Request.Args
	cmd, isCommand := args["command"].(string)
	var argv []string
	if !isCommand {
		if raw, ok := args["argv"]; ok && raw != nil {
			argv, _ = stringList(raw)
		}
		if len(argv) == 0 {
			return nil
		}
	}
	if pl.e.c.Shell == nil {
		return errors.New("no shell parser is configured")
	}
	if isCommand {
		pl.command = cmd
		pl.shell = shellInput(pl.e.c.Shell.Parse(ctx, cmd))
		return nil
	}
	pl.command = shellJoin(argv)
	pl.shell = shellInput(pl.e.c.Shell.FromArgv(argv))
	return nil
}

// run evaluates the chain for one session, fetching the facts the policy
// says it needs and evaluating again until the answer is final.
func (pl *pipeline) run(ctx context.Context, s *Session, explain bool) (outcome, error) {
	in, err := pl.input(ctx, s)
	if err != nil {
		return outcome{}, err
	}
	for round := 0; round < maxRounds; round++ {
		out, err := pl.eval(ctx, in, explain)
		if err != nil {
			return outcome{}, err
		}
		if len(out.needs) == 0 {
			return out, nil
		}
		needs := out.needs
		// The parent's decision comes first: when it denies, the chain
		// ends there and nothing (no model) is asked for the rest.
		if slices.Contains(needs, "parent") {
			needs = []string{"parent"}
		}
		for _, need := range needs {
			switch need {
			case "danger":
				in["danger"] = dangerInput(pl.assess(ctx, s))
			case "parent":
				if s.Parent == nil {
					return outcome{}, fmt.Errorf("policy needs the parent's decision of a session without a parent")
				}
				parent, err := pl.run(ctx, withDefaults(s.Parent), false)
				if err != nil {
					return outcome{}, fmt.Errorf("parent session: %w", err)
				}
				in["parent_decision"] = map[string]any{
					"decision": parent.decision.Decision,
					"source":   parent.decision.Source,
					"rule":     parent.decision.Rule,
					"reason":   parent.decision.Reason,
				}
			default:
				return outcome{}, fmt.Errorf("policy needs %q, which the engine cannot supply", need)
			}
		}
	}
	return outcome{}, fmt.Errorf("policy still needs facts after %d rounds", maxRounds)
}

// assess asks the assessor once per decision; the parent's chain shares
// the verdict.
func (pl *pipeline) assess(ctx context.Context, s *Session) Danger {
	if pl.danger == nil {
		d := Danger{Verdict: Dangerous, By: "unavailable"}
		if pl.e.c.Assessor != nil {
			d = pl.e.c.Assessor.Assess(ctx, pl.command, s)
		}
		pl.danger = &d
	}
	return *pl.danger
}

func (pl *pipeline) eval(ctx context.Context, in map[string]any, explain bool) (outcome, error) {
	start := pl.e.c.Now()
	value, err := ast.InterfaceToValue(in)
	if err != nil {
		return outcome{}, fmt.Errorf("building input: %w", err)
	}
	var key string
	if !explain {
		if key, err = inputKey(value); err != nil {
			return outcome{}, err
		}
		if out, ok := pl.p.memo.get(key); ok {
			pl.e.c.Observer.Evaluated(0, true)
			return out, ctx.Err() // a caller that has gone gets no answer
		}
	}
	query, name := pl.p.answer, AnswerPoint
	if explain {
		query, name = pl.p.explain, EntryPoint
	}
	evalCtx, cancel := context.WithTimeout(ctx, pl.e.c.EvalTimeout)
	defer cancel()
	rs, err := query.Eval(evalCtx, rego.EvalParsedInput(value))
	pl.e.c.Observer.Evaluated(pl.e.c.Now().Sub(start), false)
	if err != nil {
		return outcome{}, fmt.Errorf("evaluating %s: %w", name, err)
	}
	// A decision whose caller has gone is not answered, least of all allowed.
	if err := ctx.Err(); err != nil {
		return outcome{}, fmt.Errorf("evaluating %s: %w", name, err)
	}
	out, err := decodeResult(rs, name, explain)
	if err == nil && !explain {
		pl.p.memo.put(key, out)
	}
	return out, err
}
