package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runPDP runs the pdp command line with stdin and returns stdout and the error.
func runPDP(t *testing.T, stdin string, args ...string) (map[string]any, string, error) {
	t.Helper()
	cmd := rootCommand()
	var out bytes.Buffer
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	var doc map[string]any
	if err == nil {
		if jerr := json.Unmarshal(out.Bytes(), &doc); jerr != nil {
			t.Fatalf("output is not JSON: %v\n%s", jerr, out.String())
		}
	}
	return doc, out.String(), err
}

func TestDecideCommand(t *testing.T) {
	cases := []struct {
		name, body       string
		decision, source string
	}{
		{"read-write write", `{"session_id":"s","tool":"write_file","args":{"path":"/w/a"},"session":{"permission_level":"READ_WRITE","workspace":"/w"}}`, "allow", "level"},
		{"read-only write", `{"session_id":"s","tool":"write_file","args":{"path":"/w/a"},"session":{"permission_level":"READ_ONLY","workspace":"/w"}}`, "ask", "level"},
		{"grant", `{"session_id":"s","tool":"shell","args":{"command":"make check"},"session":{"grants":[{"capability":"shell.exec","fingerprint":"make check"}]}}`, "allow", "session-grant"},
		{"sub-agent scope", `{"session_id":"s","tool":"shell","args":{"command":"ls"},"session":{"scope":["fs.*"],"parent":{"permission_level":"FULL"}}}`, "deny", "default"},
		{"session rules", `{"session_id":"s","tool":"mcp__github__create_issue","session":{"rules":{"mcp.github.*":"ask"}}}`, "ask", "config"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc, out, err := runPDP(t, tc.body, "decide")
			if err != nil {
				t.Fatalf("decide: %v\n%s", err, out)
			}
			if doc["decision"] != tc.decision || doc["source"] != tc.source {
				t.Fatalf("got %s/%s, want %s/%s\n%s", doc["decision"], doc["source"], tc.decision, tc.source, out)
			}
			for _, key := range []string{"decision_id", "decision", "need_approval", "source", "rule", "reason", "capability", "fingerprint", "grantable", "would_grant", "danger", "revision"} {
				if _, ok := doc[key]; !ok {
					t.Errorf("field %q is missing", key)
				}
			}
			if _, ok := doc["trace"]; ok {
				t.Error("trace without --explain")
			}
		})
	}
}

func TestDecideExplainAndPrintInput(t *testing.T) {
	body := `{"session_id":"s","tool":"shell","args":{"command":"make check"},"cwd":"/w"}`
	doc, out, err := runPDP(t, body, "decide", "--explain")
	if err != nil {
		t.Fatal(err)
	}
	if trace, ok := doc["trace"].([]any); !ok || len(trace) != 10 {
		t.Fatalf("trace: %s", out)
	}

	doc, out, err = runPDP(t, body, "decide", "--print-input")
	if err != nil {
		t.Fatal(err)
	}
	session, _ := doc["session"].(map[string]any)
	shell, _ := doc["shell"].(map[string]any)
	if doc["tool"] != "shell" || session["permission_level"] != "READ_ONLY" || session["workspace"] != "/w" || shell["parsed"] != true {
		t.Fatalf("input document: %s", out)
	}
	if _, ok := doc["decision"]; ok {
		t.Fatal("--print-input printed a decision")
	}
}

func TestDecideRejectsBadInput(t *testing.T) {
	cases := map[string]string{
		"empty":               "",
		"not JSON":            "{",
		"two documents":       `{"session_id":"s","tool":"Read"} {}`,
		"unknown field":       `{"session_id":"s","tool":"Read","sesion":{}}`,
		"wrong type":          `{"session_id":"s","tool":"Read","args":[]}`,
		"bad session id":      `{"session_id":"a b","tool":"Read"}`,
		"no tool":             `{"session_id":"s"}`,
		"unknown level":       `{"session_id":"s","tool":"Read","session":{"permission_level":"GOD"}}`,
		"tool and capability": `{"session_id":"s","tool":"Bash","capability":"fs.read"}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			_, out, err := runPDP(t, body, "decide")
			if err == nil {
				t.Fatalf("accepted: %s", out)
			}
			if strings.Contains(out, `"decision"`) {
				t.Fatalf("printed a decision for bad input: %s", out)
			}
		})
	}
}

func TestDecideWithAPolicyDirectory(t *testing.T) {
	dir := t.TempDir()
	rego := `package toolperm

decision := answer

answer := {"decision": "deny", "source": "config", "rule": "LOCKDOWN", "reason": "Locked down.", "capability": null, "fingerprint": null, "grantable": false, "danger": null, "needs": []}
`
	if err := os.WriteFile(filepath.Join(dir, "lockdown.rego"), []byte(rego), 0o644); err != nil {
		t.Fatal(err)
	}
	body := `{"session_id":"s","tool":"Read","session":{"permission_level":"FULL"}}`
	doc, out, err := runPDP(t, body, "decide", "--policies", dir)
	if err != nil || doc["rule"] != "LOCKDOWN" {
		t.Fatalf("--policies: %v %s", err, out)
	}

	cfg := writeConfig(t, t.TempDir(), "policy:\n  path: "+dir+"\n")
	doc, out, err = runPDP(t, body, "decide", "--config", cfg)
	if err != nil || doc["rule"] != "LOCKDOWN" {
		t.Fatalf("--config: %v %s", err, out)
	}

	if _, out, err := runPDP(t, body, "decide", "--policies", filepath.Join(dir, "missing")); err == nil {
		t.Fatalf("a missing policy directory was accepted: %s", out)
	}
	if _, out, err := runPDP(t, body, "decide", "--config", filepath.Join(dir, "missing.yaml")); err == nil {
		t.Fatalf("a missing --config file was accepted: %s", out)
	}
}
