package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
)

// pdpRun is one finished `pdp …` process.
type pdpRun struct {
	stdout, stderr string
	status         int
}

// runPDPProcess runs `pdp args…` in dir (the package directory when empty) with
// a PATH that holds no Go toolchain, as on a machine with only the
// release binary, and returns what it printed and its exit status.
func runPDPProcess(t *testing.T, dir string, args ...string) pdpRun {
	t.Helper()
	return runPDPProcessWith(t, dir, nil, args...)
}

// runPDPProcessWith is runPDPProcess with these variables too.
func runPDPProcessWith(t *testing.T, dir string, env []string, args ...string) pdpRun {
	t.Helper()
	cmd := pdpProcess(args, append([]string{"PATH=" + t.TempDir()}, env...)...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := pdpRun{stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.status = exit.ExitCode()
	case err != nil:
		t.Fatalf("pdp %v: %v", args, err)
	}
	return r
}

func (r pdpRun) String() string {
	return fmt.Sprintf("exit status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
}

// writeFiles writes name → content into a new directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var passSummary = regexp.MustCompile(`(?m)^PASS: (\d+)/(\d+)$`)

func TestPolicyTestRunsTheRegoSuiteWithoutGo(t *testing.T) {
	r := runPDPProcess(t, filepath.Join("..", ".."), "policy", "test", "--timeout", "1m", "policies", "tests/rego")
	m := passSummary.FindStringSubmatch(r.stdout)
	if r.status != 0 || m == nil || m[1] != m[2] || m[1] == "0" {
		t.Fatalf("pdp policy test policies tests/rego, want OPA's PASS: n/n and status 0:\n%s", r)
	}
	t.Logf("PASS: %s/%s", m[1], m[2])
}

// tiny is a policy of two rules, one of them tested.
var tiny = map[string]string{
	"p.rego": "package tiny\n\nimport rego.v1\n\ntested := true\n\nuntested := 1 if input.x\n",
}

func TestPolicyTestAFailingTestExitsNonZero(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"p.rego":      tiny["p.rego"],
		"p_test.rego": "package tiny_test\n\nimport rego.v1\n\ntest_passes if data.tiny.tested\n\ntest_fails if data.tiny.untested == 1\n",
	})
	r := runPDPProcess(t, dir, "policy", "test", "--timeout", "1m", ".")
	if r.status != 2 || !strings.Contains(r.stdout, "data.tiny_test.test_fails: FAIL") || !strings.Contains(r.stdout, "FAIL: 1/2") {
		t.Fatalf("a failing test, want OPA's FAIL lines and status 2:\n%s", r)
	}
}

func TestPolicyTestCoverage(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"p.rego":      tiny["p.rego"],
		"p_test.rego": "package tiny_test\n\nimport rego.v1\n\ntest_passes if data.tiny.tested\n",
	})
	r := runPDPProcess(t, dir, "policy", "test", "--timeout", "1m", "--coverage", ".")
	if r.status != 0 || !strings.Contains(r.stdout, "PASS: 1/1") {
		t.Fatalf("--coverage, want the results and status 0:\n%s", r)
	}
	// p.rego is partly covered: its line, its share and the total.
	if !regexp.MustCompile(`(?m)^p\.rego +[1-9][0-9]?\.[0-9]% +[0-9]`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^total +[1-9][0-9]?\.[0-9]% +[0-9]+ of [0-9]+ lines$`).MatchString(r.stdout) {
		t.Fatalf("--coverage should print p.rego's share, the lines not covered and the total:\n%s", r)
	}

	r = runPDPProcess(t, dir, "policy", "test", "--timeout", "1m", "--coverage", "--format", "json", ".")
	var report struct {
		Files map[string]struct {
			NotCovered []any `json:"not_covered"`
		} `json:"files"`
		Coverage float64 `json:"coverage"`
	}
	if r.status != 0 || json.Unmarshal([]byte(r.stdout), &report) != nil {
		t.Fatalf("--coverage, want OPA's JSON report and status 0:\n%s", r)
	}
	if f, ok := report.Files["p.rego"]; !ok || len(f.NotCovered) == 0 || report.Coverage <= 0 || report.Coverage >= 100 {
		t.Fatalf("the report should cover p.rego in part: %+v", report)
	}

	r = runPDPProcess(t, dir, "policy", "test", "--timeout", "1m", "--threshold", "100", ".")
	if r.status != 2 || !strings.Contains(r.stderr, "Code coverage threshold not met") {
		t.Fatalf("--threshold 100 on partial coverage, want status 2 and OPA's message:\n%s", r)
	}
	r = runPDPProcess(t, dir, "policy", "test", "--timeout", "1m", "--threshold", "100", "--format", "json", ".")
	if r.status != 2 || !strings.Contains(r.stderr, "Code coverage threshold not met") {
		t.Fatalf("--threshold 100 --format json on partial coverage, want status 2 and OPA's message:\n%s", r)
	}
}

func TestPolicyInitThenTestCheckAndServe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my-policy")
	if r := runPDPProcess(t, "", "policy", "init", dir); r.status != 0 {
		t.Fatalf("policy init:\n%s", r)
	}
	for _, f := range []string{"chain.rego", "data.json", "rules/data.json", "rules/rules_test.rego",
		"commands/data.json", "commands/commands_test.rego", "paths/data.json", "paths/paths_test.rego"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			t.Errorf("policy init did not write %s: %v", f, err)
		}
	}
	if r := runPDPProcess(t, "", "policy", "test", "--timeout", "1m", dir); r.status != 0 || !strings.Contains(r.stdout, "PASS: 3/3") {
		t.Fatalf("policy test on the new folder, want PASS: 3/3:\n%s", r)
	}
	if r := runPDPProcess(t, "", "policy", "check", dir); r.status != 0 || !strings.Contains(r.stdout, "ok, revision sha256:") {
		t.Fatalf("policy check on the new folder:\n%s", r)
	}
	if r := runPDPProcess(t, "", "policy", "fmt", "-l", "--fail", dir); r.status != 0 || r.stdout != "" {
		t.Fatalf("the new folder should be opa fmt clean:\n%s", r)
	}

	t.Run("a second init refuses the folder unless --force", func(t *testing.T) {
		r := runPDPProcess(t, "", "policy", "init", dir)
		if r.status != 1 || !strings.Contains(r.stderr, "is not empty") || !strings.Contains(r.stderr, "--force") {
			t.Fatalf("init into a non-empty folder:\n%s", r)
		}
		if r := runPDPProcess(t, "", "policy", "init", "--force", dir); r.status != 0 {
			t.Fatalf("init --force:\n%s", r)
		}
	})

	t.Run("serve --policies serves it", func(t *testing.T) {
		if testing.Short() {
			t.Skip("starts a server process")
		}
		// Generous timeouts: the test judges the decision, not the speed.
		serve := pdpProcess([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "pdp.db"), "--config", repoConfig, "--policies", dir},
			"PDP_POLICY_EVAL_TIMEOUT=1m", "PDP_SERVER_DECISION_TIMEOUT=1m")
		url := startCmd(t, serve)
		d := decide(t, url, "init", "mcp__linear__create_issue", `{}`, "/w")
		if d.Decision != api.Ask || d.Rule != "mcp.linear.*" {
			t.Errorf("an MCP Linear call under rules/data.json: %s by %q, want ask by mcp.linear.*", d.Decision, d.Rule)
		}
		if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- serve.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve after SIGTERM: %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("serve did not stop within a minute of SIGTERM")
		}
	})
}

func TestPolicyCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	if r := runPDPProcess(t, "", "policy", "init", dir); r.status != 0 {
		t.Fatalf("policy init:\n%s", r)
	}
	data, err := os.ReadFile(filepath.Join(dir, "data.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		file  string
		write string
		want  []string
		// serve: pdp serve refuses the folder with the same words.
		serve bool
	}{
		{"a parse error", "extra.rego", "package toolperm\n\nbroken if {\n\tinput.x ==\n}\n", []string{"extra.rego:5", "rego_parse_error"}, false},
		{"an unused variable (strict)", "extra.rego", "package toolperm\n\nimport rego.v1\n\nbroken if {\n\tx := 1\n}\n", []string{"extra.rego:6", "assigned var x unused"}, false},
		{"a bad catalogue entry", "data.json", strings.Replace(string(data), `"file_path": "path"`, `"file_path": "paht"`, 1),
			[]string{"pdp serve would not activate it", `data.tools["read_file"]`, "paht"}, true},
		{"an action spelled wrong", "rules/data.json", `{"mcp.linear.*": "alow"}`,
			[]string{"rules/data.json: " + `data.rules["mcp.linear.*"]: the string "alow" is not an action`}, true},
		{"every problem in one pass", "commands/data.json", `{"git push --force": "block", "rm": 3}`,
			[]string{"2 problem(s)", `commands/data.json: data.commands["git push --force"]`, `"block"`, `data.commands.rm: 3 is not an action`}, true},
		{"a misspelled key of the program table", "data.json", strings.Replace(string(data), `"write_options"`, `"write_option"`, 1),
			[]string{"data.json: data.shell.programs.sed.write_option: is not a key of a program's description"}, true},
		{"a level rule's action", "data.json", strings.Replace(string(data), `"fs.read": "allow"`, `"fs.read": "yes"`, 1),
			[]string{`data.levels.READ_ONLY["fs.read"]: the string "yes" is not an action`}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.file)
			before, err := os.ReadFile(p)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(c.write), 0o644); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if before == nil {
					_ = os.Remove(p)
				} else {
					_ = os.WriteFile(p, before, 0o644)
				}
			}()
			r := runPDPProcess(t, "", "policy", "check", dir)
			if r.status != 1 {
				t.Fatalf("want status 1:\n%s", r)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("the error should say %q:\n%s", w, r)
				}
			}
			if !c.serve {
				return
			}
			s := runPDPProcess(t, "", "serve", "--policies", dir, "--db", filepath.Join(t.TempDir(), "pdp.db"), "--addr", "127.0.0.1:0")
			if s.status == 0 {
				t.Fatalf("serve should refuse what policy check refuses:\n%s", s)
			}
			for _, w := range c.want[min(1, len(c.want)-1):] {
				if !strings.Contains(s.stderr, w) {
					t.Errorf("serve's refusal should say %q, as policy check does:\n%s", w, s)
				}
			}
		})
	}
	if r := runPDPProcess(t, "", "policy", "check", dir); r.status != 0 {
		t.Fatalf("the restored folder should check:\n%s", r)
	}
}

func TestPolicyFmt(t *testing.T) {
	dir := writeFiles(t, map[string]string{"ugly.rego": "package ugly\nimport rego.v1\nx:=1\n", "fine.rego": "package fine\n\nx := 1\n"})
	ugly := filepath.Join(dir, "ugly.rego")
	if r := runPDPProcess(t, "", "policy", "fmt", "-l", dir); r.status != 0 || strings.TrimSpace(r.stdout) != ugly {
		t.Fatalf("fmt -l, want only %s listed:\n%s", ugly, r)
	}
	if r := runPDPProcess(t, "", "policy", "fmt", "-l", "--fail", dir); r.status != 2 {
		t.Fatalf("fmt -l --fail on an unformatted file, want status 2:\n%s", r)
	}
	if r := runPDPProcess(t, "", "policy", "fmt", "-w", dir); r.status != 0 {
		t.Fatalf("fmt -w:\n%s", r)
	}
	if b, _ := os.ReadFile(ugly); string(b) != "package ugly\n\nimport rego.v1\n\nx := 1\n" {
		t.Errorf("fmt -w wrote %q", b)
	}
	if r := runPDPProcess(t, "", "policy", "fmt", "-l", "--fail", dir); r.status != 0 || r.stdout != "" {
		t.Fatalf("after fmt -w nothing should be listed:\n%s", r)
	}
}
