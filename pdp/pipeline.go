package pdp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp/internal/evalcache"
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
	facts   *ShellFacts
	// typedKey and typedRest: the process a write of typed input goes
	// to, and the partial line it leaves held (stdin.go).
	typedKey, typedRest string
	// shell is the facts as the input document carries them (input.go).
	shell  map[string]any
	danger *api.Danger
}

func (e *Engine) evaluate(ctx context.Context, p *Policy, call Call) (api.Decision, *Recorded, error) {
	pl := &pipeline{e: e, p: p, call: call}
	if err := pl.parseCommand(ctx); err != nil {
		return api.Decision{}, nil, err
	}
	out, rec, err := pl.run(ctx, withDefaults(call.Session), call.Explain)
	if err != nil {
		return api.Decision{}, nil, err
	}
	if pl.typedKey != "" {
		// Held whatever the answer: a partial line that did not reach
		// the process only makes later lines read stricter.
		e.typed.set(pl.typedKey, pl.typedRest)
	}
	return out.decision, rec, nil
}

// parseCommand turns args.command (or the argument the tool's catalogue
// entry declares as its command, see commandArgName; or args.argv, when
// there is no command string) into shell facts. A command over the shell limits, or
// whose request ends while it is parsed, is not parsed: never grantable.
func (pl *pipeline) parseCommand(ctx context.Context) error {
	args := pl.call.Request.Args
	name := commandArgName(pl.p.catalogue.Lookup(pl.call.Request.Runtime, pl.call.Request.Tool))
	rawCmd, _ := Argument(args, name)
	cmd, isCommand := rawCmd.(string)
	if rawCmd != nil && !isCommand {
		return invalid("invalid_args", "args.%s must be a string, got %T", name, rawCmd)
	}
	var argv []string
	if !isCommand {
		if raw, ok := Argument(args, "argv"); ok && raw != nil {
			argv, _ = stringList(raw)
		}
		if len(argv) == 0 {
			return pl.parseTyped(ctx)
		}
	}
	if pl.e.c.Shell == nil {
		return errors.New("no shell parser is configured")
	}
	var f ShellFacts
	if isCommand {
		pl.command = cmd
		f = pl.e.c.Shell.Parse(ctx, cmd)
	} else {
		pl.command = shellJoin(argv)
		f = pl.e.c.Shell.FromArgv(argv)
	}
	pl.facts = &f
	return nil
}

// run evaluates the chain for one session, fetching the facts the policy
// says it needs and evaluating again until the answer is final. It returns
// what the answer was judged on, for the audit trail and replay.
func (pl *pipeline) run(ctx context.Context, s *SessionTree, explain bool) (evaluation, *Recorded, error) {
	in, verdict, project, err := pl.input(ctx, s)
	if err != nil {
		return evaluation{}, nil, err
	}
	out, rec, err := pl.evaluator().resolve(ctx, in, explain, liveFacts{pl: pl, s: s})
	if rec != nil {
		// The checked paths themselves, so a candidate's path rules can
		// be matched against them again on replay.
		rec.Paths, rec.CaseInsensitive, rec.SessionPathRules = verdict.Paths, verdict.CaseInsensitive, s.PathRules
		rec.ProjectPathRules = project.pathRules()
		rec.Tree = rootID(s)
	}
	return out, rec, err
}

func (pl *pipeline) evaluator() evaluator {
	return evaluator{p: pl.p, timeout: pl.e.c.EvalTimeout, obs: pl.e.c.Observer, now: pl.e.c.Now}
}

// facts supplies what the policy says it still needs.
type facts interface {
	// danger is the danger verdict of the call's command.
	danger(ctx context.Context) api.Danger
	// parent is the parent session's decision of the same call, and what
	// it was judged on.
	parent(ctx context.Context) (api.Decision, *Recorded, error)
}

// liveFacts fetch what a decision needs: the assessor's verdict and the
// parent's chain run on the same call.
type liveFacts struct {
	pl *pipeline
	s  *SessionTree
}

func (f liveFacts) danger(ctx context.Context) api.Danger { return f.pl.assess(ctx, f.s) }

func (f liveFacts) parent(ctx context.Context) (api.Decision, *Recorded, error) {
	if f.s.Parent == nil {
		return api.Decision{}, nil, fmt.Errorf("policy needs the parent's decision of a session without a parent")
	}
	out, rec, err := f.pl.run(ctx, withDefaults(f.s.Parent), false)
	return out.decision, rec, err
}

// resolve evaluates in, supplies what the policy says it needs from f and
// evaluates again, at most maxRounds times.
func (ev evaluator) resolve(ctx context.Context, in map[string]any, explain bool, f facts) (evaluation, *Recorded, error) {
	var parentRec *Recorded
	var prev *evalcache.Round
	for round := 0; round < maxRounds; round++ {
		out, this, err := ev.eval(ctx, in, explain, prev)
		prev = this
		if err != nil {
			return evaluation{}, nil, err
		}
		if len(out.needs) == 0 {
			return out, &Recorded{Input: in, Parent: parentRec}, nil
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
				in["danger"] = dangerInput(f.danger(ctx))
			case "parent":
				parent, rec, err := f.parent(ctx)
				if err != nil {
					return evaluation{}, nil, fmt.Errorf("parent session: %w", err)
				}
				parentRec = rec
				in["parent_decision"] = map[string]any{
					"decision": parent.Decision,
					"source":   parent.Source,
					"rule":     parent.Rule,
					"reason":   parent.Reason,
				}
			default:
				return evaluation{}, nil, fmt.Errorf("policy needs %q, which the engine cannot supply", need)
			}
		}
	}
	return evaluation{}, nil, fmt.Errorf("policy still needs facts after %d rounds", maxRounds)
}

// assessText puts the command to the assessor with its canonical text,
// "" when the shell gives it none (it does not parse, or is over the
// limits).
func (pl *pipeline) assessText(ctx context.Context, s *SessionTree) api.Danger {
	c := AssessedCommand{Text: pl.command}
	if pl.e.c.Shell != nil {
		if canonical, err := pl.e.c.Shell.Canonical(pl.command); err == nil {
			c.Canonical = canonical
		}
	}
	return pl.e.c.Assessor.Assess(ctx, c, s)
}

// assess asks the assessor once per decision; the parent's chain shares
// the verdict.
func (pl *pipeline) assess(ctx context.Context, s *SessionTree) api.Danger {
	if pl.danger == nil {
		d := api.Danger{Verdict: Dangerous, By: "unavailable"}
		if pl.e.c.Assessor != nil {
			d = pl.assessText(ctx, s)
		}
		pl.danger = &d
	}
	return *pl.danger
}

func dangerInput(d api.Danger) map[string]any {
	return map[string]any{"verdict": d.Verdict, "by": d.By}
}

// parseTyped turns typed input (an argument of kind stdin) into shell
// facts of the complete lines it finishes, with what is held for its
// process before it (stdin.go). Facts marked typed are judged by the
// floor, command rules and path rules, not as a shell.exec call.
func (pl *pipeline) parseTyped(ctx context.Context) error {
	req := pl.call.Request
	entry, known := pl.p.catalogue.Lookup(req.Runtime, req.Tool)
	if !known {
		return nil
	}
	var typed string
	found := false
	for _, name := range stdinArgNames(entry) {
		raw, ok := Argument(req.Args, name)
		if !ok || raw == nil {
			continue
		}
		s, isString := raw.(string)
		if !isString {
			return invalid("invalid_args", "args.%s must be a string, got %T", name, raw)
		}
		typed += s
		found = true
	}
	if !found {
		return nil
	}
	if pl.e.c.Shell == nil {
		return errors.New("no shell parser is configured")
	}
	pl.typedKey = typedKey(req.SessionID)
	lines, rest, unread := typedLines(pl.e.typed.get(pl.typedKey), typed)
	pl.typedRest = rest
	var f ShellFacts
	switch {
	case unread != "":
		f = ShellFacts{Parsed: false, Error: unread}
	case len(lines) == 0:
		return nil
	default:
		pl.command = strings.Join(lines, "\n")
		f = pl.e.c.Shell.Parse(ctx, pl.command)
	}
	f.Typed = true
	pl.facts = &f
	return nil
}
