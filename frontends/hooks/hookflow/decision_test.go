package hookflow_test

import (
	"strings"
	"testing"

	"github.com/toolperm/pdp/frontends/hooks/hookflow"
)

const askAnswer = `{"decision_id":"d1","decision":"ask","need_approval":true,"source":"level","rule":"shell.exec",` +
	`"reason":"Running a command asks at READ_ONLY.","capability":"shell.exec","fingerprint":"git status",` +
	`"grantable":true,"danger":{"verdict":"DANGEROUS","by":"screen"},"revision":"r1"}`

func TestParseDecisionReadsEveryField(t *testing.T) {
	d, err := hookflow.ParseDecision([]byte(askAnswer))
	if err != nil {
		t.Fatal(err)
	}
	if d.DecisionID != "d1" || d.Decision != "ask" || !d.NeedApproval || d.Source != "level" || d.Rule != "shell.exec" ||
		d.Reason == "" || *d.Capability != "shell.exec" || *d.Fingerprint != "git status" || !d.Grantable ||
		d.Danger == nil || d.Danger.Verdict != "DANGEROUS" || d.Danger.By != "screen" || d.Revision != "r1" {
		t.Fatalf("%+v", d)
	}
	nulls := strings.NewReplacer(`"shell.exec","fingerprint"`, `null,"fingerprint"`, `"git status"`, "null", `{"verdict":"DANGEROUS","by":"screen"}`, "null").Replace(askAnswer)
	d, err = hookflow.ParseDecision([]byte(nulls))
	if err != nil || d.Capability != nil || d.Fingerprint != nil || d.Danger != nil {
		t.Fatalf("nulls: %+v %v", d, err)
	}
}

func TestParseDecisionRefusesIncompleteAnswers(t *testing.T) {
	cases := map[string]struct{ body, says string }{
		"bare allow":          {`{"decision":"allow"}`, `"decision_id" is missing`},
		"string grantable":    {strings.Replace(askAnswer, `"grantable":true`, `"grantable":"true"`, 1), "grantable is not a boolean"},
		"need_approval off":   {strings.Replace(askAnswer, `"need_approval":true`, `"need_approval":false`, 1), "need_approval is false"},
		"unknown decision":    {strings.Replace(askAnswer, `"decision":"ask"`, `"decision":"maybe"`, 1), "not allow, ask or deny"},
		"trailing garbage":    {askAnswer + "}", "more after the object"},
		"duplicate field":     {strings.Replace(askAnswer, `"rule"`, `"source":"x","rule"`, 1), "appears twice"},
		"field in other case": {strings.Replace(askAnswer, `{`, `{"DECISION":"allow",`, 1), "another case"},
		"not JSON":            {`<html>`, "not a JSON object"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := hookflow.ParseDecision([]byte(tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v, want one that says %q", err, tc.says)
			}
		})
	}
}
