// Package readme_test runs the shell examples of README.md against a real
// `pdp serve`, so the README cannot drift from what the binary does.
//
// The rules, for whoever adds a section to the README:
//
//   - Every ```sh block is run, in the order of the README, each in its
//     own `bash -e -o pipefail` in the repository's root, against one
//     server (so a block may use what an earlier one created). It passes
//     when it exits 0. curl is run with --fail-with-body, so an HTTP
//     error answer fails the block; pdp commands fail on errors anyway.
//   - Blocks of other languages (json, yaml, plain output) are not run.
//   - A block that cannot run here (it starts a long-lived process, runs
//     the test suite, needs a value only a person has) is preceded by
//     `<!-- readme-test: skip REASON -->`; the reason is required.
//   - `<!-- readme-test: expect TEXT -->` before a block (one per line,
//     as many as wanted) requires TEXT in the block's output.
//   - Before it runs, a block's text is rewritten: `go run ./cmd/pdp` is
//     `pdp` (a binary built from this checkout, first on PATH),
//     `localhost:8181` and `127.0.0.1:8181` are the test server's address
//     (and PDP_URL is its URL), and `/tmp/` is a fresh directory of the
//     test's. PDP_TOKEN is empty: the server has no tokens. PDP_DB_PATH
//     is the server's database, for commands that open it (pdp replay).
//     HOME is a directory of the test's; go keeps this machine's caches.
//   - A block runs for at most two minutes. One that installs packages,
//     reaches the network or runs other suites is skipped, saying so.
package readme_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolperm/pdp/internal/testserver"
)

// root is the repository's root, where the README and the blocks run.
var root = filepath.Join("..", "..")

// block is one fenced code block of the README.
type block struct {
	line   int    // of its opening fence
	lang   string // the fence's info string
	text   string
	skip   string // the reason it is not run; "" runs it
	expect []string
}

const marker = "<!-- readme-test:"

// parse reads the fenced blocks of a Markdown text with their markers.
func parse(t *testing.T, md string) []block {
	t.Helper()
	var blocks []block
	var pending []string // marker lines right above the next fence
	var cur *block
	var body strings.Builder
	sc := bufio.NewScanner(strings.NewReader(md))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur != nil && trimmed == "```":
			cur.text = body.String()
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line + "\n")
		case strings.HasPrefix(trimmed, "```"):
			cur = &block{line: n, lang: strings.TrimPrefix(trimmed, "```")}
			body.Reset()
			for _, m := range pending {
				applyMarker(t, cur, m)
			}
			pending = nil
		case strings.HasPrefix(trimmed, marker):
			pending = append(pending, trimmed)
		case trimmed != "":
			if len(pending) > 0 {
				t.Errorf("README.md:%d: a readme-test marker must be right above a code block: %s", n-1, pending[0])
			}
			pending = nil
		}
	}
	if cur != nil {
		t.Fatalf("README.md:%d: a code block is never closed", cur.line)
	}
	return blocks
}

func applyMarker(t *testing.T, b *block, m string) {
	t.Helper()
	body, ok := strings.CutSuffix(strings.TrimSpace(strings.TrimPrefix(m, marker)), "-->")
	if !ok {
		t.Errorf("README.md:%d: marker %q does not end with -->", b.line, m)
		return
	}
	verb, arg, _ := strings.Cut(strings.TrimSpace(body), " ")
	arg = strings.TrimSpace(arg)
	switch {
	case verb == "skip" && arg != "":
		b.skip = arg
	case verb == "expect" && arg != "":
		b.expect = append(b.expect, arg)
	default:
		t.Errorf("README.md:%d: marker %q: want `skip REASON` or `expect TEXT`", b.line, m)
	}
}

func TestParseMarkers(t *testing.T) {
	md := "text\n\n<!-- readme-test: skip it runs forever -->\n```sh\nsleep inf\n```\n\n" +
		"<!-- readme-test: expect ok -->\n<!-- readme-test: expect done -->\n```sh\necho ok done\n```\n```json\n{}\n```\n"
	got := parse(t, md)
	if len(got) != 3 || got[0].skip != "it runs forever" || got[1].skip != "" ||
		strings.Join(got[1].expect, "|") != "ok|done" || got[2].lang != "json" || got[1].text != "echo ok done\n" {
		t.Fatalf("%+v", got)
	}
}

func TestREADMEShellBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pdp and runs a server")
	}
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := parse(t, string(md))
	if t.Failed() {
		t.FailNow()
	}

	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "pdp"), "./cmd/pdp")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	realCurl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("the README's examples use curl; install it (Debian: curl)")
	}
	shim := fmt.Sprintf("#!/bin/sh\nexec %q --fail-with-body --show-error \"$@\"\n", realCurl)
	if err := os.WriteFile(filepath.Join(bin, "curl"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}

	work := t.TempDir()
	serve := exec.Command(filepath.Join(bin, "pdp"), "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(work, "pdp.db"))
	serve.Dir = root // the repository's config.yaml
	serve.Env = append(os.Environ(), "PDP_SERVER_ADDR=", "PDP_DB_PATH=")
	base, _ := testserver.Process(t, serve, time.Minute)
	addr := strings.TrimPrefix(base, "http://")

	tmp := t.TempDir()
	rewrite := strings.NewReplacer(
		"go run ./cmd/pdp", "pdp",
		"localhost:8181", addr,
		"127.0.0.1:8181", addr,
		"/tmp/", tmp+"/",
	)
	// HOME is the test's own; go in a block keeps this machine's caches.
	goEnv, err := exec.Command("go", "env", "GOPATH", "GOMODCACHE", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	goDirs := strings.Split(strings.TrimSpace(string(goEnv)), "\n")
	if len(goDirs) != 3 {
		t.Fatalf("go env: %q", goEnv)
	}
	env := append(os.Environ(), "GOPATH="+goDirs[0], "GOMODCACHE="+goDirs[1], "GOCACHE="+goDirs[2],
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PDP_URL="+base, "PDP_TOKEN=", "PDP_DB_PATH="+filepath.Join(work, "pdp.db"), "PDP_CA_FILE=", "HOME="+t.TempDir(), "CLAUDE_PROJECT_DIR=")

	ran := 0
	for _, b := range blocks {
		if b.lang != "sh" {
			continue
		}
		name := fmt.Sprintf("README.md:%d", b.line)
		if b.skip != "" {
			t.Logf("%s: skipped: %s", name, b.skip)
			continue
		}
		ran++
		t.Run(name, func(t *testing.T) {
			script := rewrite.Replace(b.text)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script)
			cmd.Dir, cmd.Env = root, env
			// The block and whatever it started are one process group,
			// ended together: on the timeout, and after it exits.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			cmd.WaitDelay = 5 * time.Second
			defer func() {
				if cmd.Process != nil {
					_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				}
			}()
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\n--- the block as run:\n%s--- its output:\n%s", err, script, out.String())
			}
			for _, want := range b.expect {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the output lacks %q\n--- the block as run:\n%s--- its output:\n%s", want, script, out.String())
				}
			}
		})
	}
	if ran < 5 {
		t.Fatalf("only %d shell blocks ran: the README's blocks were not found", ran)
	}
}
