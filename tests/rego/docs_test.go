package rego_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"
)

// TestTheFlowRuleExamplesOfTheDocsWork: the two flow rules
// docs/policy.md shows ("Writing your own flow rule") compile beside the
// shipped policy and stop what they say they stop, at FULL.
func TestTheFlowRuleExamplesOfTheDocsWork(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "policy.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	at := strings.Index(doc, "### Writing your own flow rule")
	if at < 0 {
		t.Fatal(`docs/policy.md has no "Writing your own flow rule"`)
	}
	blocks := regexp.MustCompile("(?s)```rego\n(.*?)```").FindAllStringSubmatch(doc[at:], 2)
	if len(blocks) != 2 {
		t.Fatalf("found %d Rego examples, want 2", len(blocks))
	}
	opts := []func(*rego.Rego){rego.Query("data.toolperm.answer"), rego.Load([]string{filepath.Join("..", "..", "policies")}, nil)}
	for i, b := range blocks {
		opts = append(opts, rego.Module(fmt.Sprintf("example%d.rego", i), b[1]))
	}
	query, err := rego.New(opts...).PrepareForEval(context.Background())
	if err != nil {
		t.Fatalf("the examples do not compile with the policy: %v", err)
	}
	shell := func(argv ...string) map[string]any {
		literal := make([]any, len(argv))
		words := make([]any, len(argv))
		for i, w := range argv {
			literal[i], words[i] = true, w
		}
		part := map[string]any{"text": strings.Join(argv, " "), "argv": words, "literal": literal, "simple": true, "first": 0, "end": 1,
			"assignments": 0, "substitutions": 0, "evaluated": 0, "redirections": []any{}, "background": false, "negated": false}
		return map[string]any{"parsed": true, "commands": []any{map[string]any{"argv": words, "literal": literal}}, "parts": []any{part},
			"operators": []any{}, "compound": []any{}, "redirections": 0, "substitutions": 0, "assignments": 0, "redirects": []any{}, "evaluated": 0, "assigned": []any{}}
	}
	session := func(execution string, labels map[string]any) map[string]any {
		return map[string]any{"permission_level": "FULL", "mode": "on-demand", "execution_mode": execution, "workspace": "/w",
			"rules": map[string]any{}, "command_rules": map[string]any{}, "grants": []any{}, "has_parent": false, "labels": labels}
	}
	seen := map[string]any{"untrusted_input": map[string]any{"decision_id": "d1", "summary": "WebFetch https://x"},
		"trifecta_accepted": map[string]any{"decision_id": "d2", "summary": ""}}
	for _, c := range []struct {
		name        string
		input       map[string]any
		rule, reach string
	}{
		{"no push after untrusted input, even accepted", map[string]any{"tool": "shell", "shell": shell("git", "push"), "session": session("LOCAL", seen),
			"workspace": map[string]any{"outside": []any{}, "paths": []any{}}}, "NO_PUSH_AFTER_UNTRUSTED", "deny"},
		{"no secrets in CLOUD", map[string]any{"tool": "shell", "shell": shell("printenv"), "session": session("CLOUD", map[string]any{}),
			"workspace": map[string]any{"outside": []any{}, "paths": []any{}}}, "NO_SECRETS_IN_CLOUD", "deny"},
		{"a push in a fresh session", map[string]any{"tool": "shell", "shell": shell("git", "push"), "session": session("LOCAL", map[string]any{}),
			"workspace": map[string]any{"outside": []any{}, "paths": []any{}}}, "MODE", "allow"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs, err := query.Eval(context.Background(), rego.EvalInput(c.input))
			if err != nil || len(rs) != 1 {
				t.Fatalf("eval: %v %v", rs, err)
			}
			got := rs[0].Expressions[0].Value.(map[string]any)
			if got["rule"] != c.rule || got["decision"] != c.reach {
				t.Fatalf("got %v/%v (%v), want %s/%s", got["decision"], got["rule"], got["reason"], c.reach, c.rule)
			}
		})
	}
}
