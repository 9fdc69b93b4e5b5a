package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// The converter: it reads each public source at its pinned commit from a
// local git clone and writes testdata/traffic/<source>.jsonl (one
// trajectory a line, its tool calls in order, each repository root
// written {ws}) and testdata/corpora/<corpus>.jsonl. Nothing is added:
// a call is what the agent ran, mapped to the PDP's tool names (shell
// commands to Bash, the file editor's view/create/edit to Read/Write/Edit,
// their contents left out: the policy does not judge them).

type trafficSource struct {
	Key, Label  string
	Repo        string
	Commit      string
	Prefix      string // a file, or a directory whose files end in Suffix
	Suffix      string
	Every       int // keep every n-th file (sorted by path); 0 or 1: all
	Format      string
	Description string
}

var trafficSources = []trafficSource{
	{Key: "mini-swe-agent", Label: "mini-swe-agent 1.15, Gemini 3 Pro, SWE-bench Verified",
		Repo: "gruckion/mini-swe-agent", Commit: "d12a71affd95403b036b2bdbd827349b77bfffb9",
		Prefix: "swebench_results/20251118_gemini-3-pro-74pct/trajs/", Suffix: ".traj.json", Every: 2, Format: "mini",
		Description: "one bash block per assistant message; every second trajectory by instance id"},
	{Key: "swe-agent", Label: "SWE-agent 1.x (function calling), SWE-bench Verified",
		Repo: "lgetter/swe-agent-trajectory-analysis", Commit: "b63a1fe6ec11271b2c90730c242c3c562622b6d2",
		Prefix: "trajs/", Suffix: ".traj", Format: "sweagent",
		Description: "trajectory[].action: bash commands and str_replace_editor view/create/str_replace/insert"},
	{Key: "swe-agent", Label: "SWE-agent 1.x (function calling), SWE-bench Verified",
		Repo: "apurv-sawant15/SWE-Agent-Trajectory-Analysis", Commit: "c3da9e5359dbb0ec9d1e19d5365e533bfda2fac0",
		Prefix: "", Suffix: ".traj", Format: "sweagent",
		Description: "Qwen-2.5-Coder and Claude Sonnet runs; files stored as large objects the clone lacks are skipped"},
	{Key: "openhands", Label: "OpenHands CodeAct 2.1, GPT-4o, SWE-Gym",
		Repo: "zhu-yiqi/agent-data-protocol", Commit: "a444b4bde8b4b45dc70c9074952464ff66daafc8",
		Prefix: "datasets/SWE-Gym_OpenHands-Sampled-Trajectories/sample_raw.json", Format: "openhands",
		Description: "sample of SWE-Gym/OpenHands-Sampled-Trajectories: tool_calls execute_bash and str_replace_editor"},
	{Key: "swe-smith", Label: "SWE-agent + Claude 3.7 (SWE-smith trajectories)",
		Repo: "zhu-yiqi/agent-data-protocol", Commit: "05546b4fc77edbd6adeb297721592bb64dd03d02",
		Prefix: "datasets/SWE-smith_5kTrajectories/sample_raw.json", Format: "xmlfn",
		Description: "sample of SWE-bench/SWE-smith-trajectories: <function=bash>/<function=str_replace_editor> calls"},
	{Key: "swe-agent-0.x", Label: "SWE-agent 0.x, Llama 70B (nebius/SWE-agent-trajectories)",
		Repo: "zhu-yiqi/agent-data-protocol", Commit: "df5b5adc3b61adbe0a0cc250d56a781cbffc867e",
		Prefix: "datasets/nebius_SWE-agent-trajectories/sample_raw.json", Format: "nebius",
		Description: "sample of nebius/SWE-agent-trajectories: open/goto/scroll to Read, edit to Edit, create to Write, search_dir/search_file to Grep, find_file to Glob, the rest to Bash"},
}

type corpusSource struct {
	Name, Kind, Repo, Commit, Prefix, Format, Description string
}

var corpusSources = []corpusSource{
	{Name: "redcode-exec-bash", Kind: "dangerous", Repo: "AI-secure/RedCode", Commit: "c84b6db88fd8bd258e29f12e692ccfd4287a454d",
		Prefix: "dataset/RedCode-Exec/bash2text_dataset_json/", Format: "redcode",
		Description: "RedCode-Exec's bash cases: each case's Code, the whole script, as one command"},
	{Name: "gtfobins", Kind: "dangerous", Repo: "GTFOBins/GTFOBins.github.io", Commit: "7382261ef936e35896ba70e7a6b833352ffb9a22",
		Prefix: "_gtfobins/", Format: "gtfobins",
		Description: "every functions.<function>[].code of every entry (shell, command, reverse-shell, bind-shell, file-read, file-write, upload, download, library-load, privilege-escalation, ...), deduplicated"},
}

func convertMain(args []string) error {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	repos := fs.String("repos", "", "directory holding git clones of the sources, as OWNER+NAME, OWNER+NAME/repo, OWNER/NAME or NAME (each needs the pinned commit)")
	out := fs.String("out", "", "testdata directory to write (default: bench/asks/testdata of this module)")
	harmless := fs.String("harmless", "", "Go file whose publicCorpus read-only cases are the harmless commands (default: pdp/public_corpus_test.go of this module)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *repos == "" {
		return fmt.Errorf("-repos is required")
	}
	root, _ := moduleRoot()
	if *out == "" {
		if root == "" {
			return fmt.Errorf("no module root: give -out")
		}
		*out = filepath.Join(root, "bench", "asks", "testdata")
	}
	if *harmless == "" && root != "" {
		*harmless = filepath.Join(root, "pdp", "public_corpus_test.go")
	}
	for _, d := range []string{"traffic", "corpora"} {
		if err := os.MkdirAll(filepath.Join(*out, d), 0o755); err != nil {
			return err
		}
	}
	var notes []string
	byKey := map[string][]trajectory{}
	var keys []string
	for _, src := range trafficSources {
		gd, err := findRepo(*repos, src.Repo)
		if err != nil {
			return err
		}
		files, err := listFiles(gd, src.Commit, src.Prefix, src.Suffix)
		if err != nil {
			return err
		}
		kept, skipped, calls := 0, 0, 0
		for i, f := range files {
			if src.Every > 1 && i%src.Every != 0 {
				continue
			}
			raw, err := gitShow(gd, src.Commit, f)
			if err != nil {
				skipped++
				continue
			}
			ts, err := convertTraffic(src, f, raw)
			if err != nil {
				return fmt.Errorf("%s %s: %v", src.Repo, f, err)
			}
			for _, t := range ts {
				if len(t.Calls) == 0 {
					continue
				}
				if _, ok := byKey[src.Key]; !ok {
					keys = append(keys, src.Key)
				}
				byKey[src.Key] = append(byKey[src.Key], t)
				kept++
				calls += len(t.Calls)
			}
		}
		note := fmt.Sprintf("- %s → traffic/%s.jsonl\n  - repository: github.com/%s, commit %s\n  - path: %s%s\n  - format: %s (%s)\n  - %d trajectories, %d calls", src.Label, src.Key, src.Repo, src.Commit, src.Prefix, starIf(src.Suffix), src.Format, src.Description, kept, calls)
		if skipped > 0 {
			note += fmt.Sprintf("; %d files not in the clone (large objects) skipped", skipped)
		}
		notes = append(notes, note)
	}
	for _, k := range keys {
		if err := writeJSONL(filepath.Join(*out, "traffic", k+".jsonl"), byKey[k]); err != nil {
			return err
		}
	}
	var cnotes []string
	for _, src := range corpusSources {
		gd, err := findRepo(*repos, src.Repo)
		if err != nil {
			return err
		}
		files, err := listFiles(gd, src.Commit, src.Prefix, "")
		if err != nil {
			return err
		}
		var cases []corpusCase
		seen := map[string]bool{}
		for _, f := range files {
			raw, err := gitShow(gd, src.Commit, f)
			if err != nil {
				return err
			}
			cs, err := convertCorpus(src, f, raw)
			if err != nil {
				return fmt.Errorf("%s %s: %v", src.Repo, f, err)
			}
			for _, c := range cs {
				if strings.TrimSpace(c.Command) == "" || seen[c.Command] {
					continue
				}
				seen[c.Command] = true
				cases = append(cases, c)
			}
		}
		if err := writeJSONL(filepath.Join(*out, "corpora", src.Name+".jsonl"), cases); err != nil {
			return err
		}
		cnotes = append(cnotes, fmt.Sprintf("- %s (%s) → corpora/%s.jsonl\n  - repository: github.com/%s, commit %s\n  - path: %s*\n  - %s\n  - %d cases", src.Name, src.Kind, src.Name, src.Repo, src.Commit, src.Prefix, src.Description, len(cases)))
	}
	if *harmless != "" {
		cs, err := harmlessCases(*harmless)
		if err != nil {
			return err
		}
		if err := writeJSONL(filepath.Join(*out, "corpora", "harmless.jsonl"), cs); err != nil {
			return err
		}
		cnotes = append(cnotes, fmt.Sprintf("- harmless (harmless) → corpora/harmless.jsonl\n  - this repository's pdp/public_corpus_test.go: the cases of publicCorpus marked read-only, which that file takes from the public shell-safety suites of openai/codex (is_safe_command.rs), google-gemini/gemini-cli (shell-utils.test.ts) and anthropics/claude-code issue reports (the suite named per case)\n  - %d cases", len(cs)))
	}
	return writeSources(filepath.Join(*out, "SOURCES"), notes, cnotes)
}

func starIf(s string) string {
	if s == "" {
		return ""
	}
	return "*" + s
}

func writeSources(path string, traffic, corpora []string) error {
	var b strings.Builder
	b.WriteString(`Sources of bench/asks/testdata

Every trajectory and corpus case here is public text, converted by
bench/asks/convert.go; nothing was written by hand. To regenerate, clone
each repository below (it must hold the commit named) under one directory
and run:

    go run ./bench/asks convert -repos DIR

Trajectories (testdata/traffic): one line per agent run, its tool calls in
order. Shell commands are {"tool":"Bash","args":{"command":...}}; the file
editors' view/create/str_replace/insert are Read/Write/Edit (LS for a
directory), with file contents and edit strings left out. The run's
repository root (/testbed, /workspace/<repo>, /<repo>) is written {ws};
the replay makes it a fresh directory per session. Agent messages that
ran nothing (malformed actions, submit/finish, think) are left out.

`)
	b.WriteString("Trajectories:\n\n")
	b.WriteString(strings.Join(traffic, "\n"))
	b.WriteString("\n\nCorpora (testdata/corpora): one command a line, decided once at each level.\n\n")
	b.WriteString(strings.Join(corpora, "\n"))
	b.WriteString("\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func writeJSONL[T any](path string, items []T) error {
	var b strings.Builder
	for _, it := range items {
		line, err := json.Marshal(it)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func findRepo(dir, repo string) (string, error) {
	owner, name, _ := strings.Cut(repo, "/")
	for _, c := range []string{
		filepath.Join(dir, owner+"+"+name, "repo"),
		filepath.Join(dir, owner+"+"+name),
		filepath.Join(dir, owner, name),
		filepath.Join(dir, name),
	} {
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return c, nil
		}
	}
	return "", fmt.Errorf("no clone of %s under %s", repo, dir)
}

func listFiles(gitDir, commit, prefix, suffix string) ([]string, error) {
	args := []string{"-C", gitDir, "ls-tree", "-r", "--name-only", commit}
	if prefix != "" {
		args = append(args, "--", prefix)
	}
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-tree %s in %s: %v", commit, gitDir, err)
	}
	var files []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" && strings.HasSuffix(l, suffix) {
			files = append(files, l)
		}
	}
	sort.Strings(files)
	return files, nil
}

func gitShow(gitDir, commit, path string) ([]byte, error) {
	return exec.Command("git", "-C", gitDir, "show", commit+":"+path).Output()
}

// mapRoot writes root as {ws} wherever it stands as a whole path element.
func mapRoot(s, root string) string {
	if root == "" || root == "/" {
		return s
	}
	var b strings.Builder
	from := 0
	for {
		j := strings.Index(s[from:], root)
		if j < 0 {
			b.WriteString(s[from:])
			return b.String()
		}
		i := from + j
		end := i + len(root)
		before := i == 0 || !isPathChar(s[i-1])
		after := end == len(s) || !isPathChar(s[end]) || s[end] == '/'
		b.WriteString(s[from:i])
		if before && after {
			b.WriteString(wsToken)
		} else {
			b.WriteString(root)
		}
		from = end
	}
}

func isPathChar(c byte) bool {
	return c == '/' || c == '.' || c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func sessionName(key, file string) string {
	base := filepath.Base(file)
	for _, s := range []string{".traj.json", ".traj", ".json"} {
		base = strings.TrimSuffix(base, s)
	}
	return key + "/" + base
}

// bashBlock is mini-swe-agent's own action pattern; plainBlock is
// SWE-agent 0.x's (the last fenced block of the message).
var (
	bashBlock  = regexp.MustCompile("(?s)```bash\\s*\n(.*?)\n```")
	plainBlock = regexp.MustCompile("(?s)```[a-z]*\n(.*?)\n```")
)

func convertTraffic(src trafficSource, file string, raw []byte) ([]trajectory, error) {
	switch src.Format {
	case "mini":
		var d struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		t := trajectory{Session: sessionName(src.Key, file), Source: src.Key}
		for _, m := range d.Messages {
			if m.Role != "assistant" {
				continue
			}
			text, _ := m.Content.(string)
			blocks := bashBlock.FindAllStringSubmatch(text, -1)
			if len(blocks) != 1 { // the agent runs exactly one block, else it is a format error
				continue
			}
			cmd := strings.TrimSpace(blocks[0][1])
			if cmd == "" {
				continue
			}
			t.Calls = append(t.Calls, bashCall(mapRoot(cmd, "/testbed")))
		}
		return []trajectory{t}, nil
	case "sweagent":
		var d struct {
			Trajectory []struct {
				Action string `json:"action"`
			} `json:"trajectory"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		t := trajectory{Session: sessionName(src.Key, file), Source: src.Key}
		for _, s := range d.Trajectory {
			a := strings.TrimSpace(s.Action)
			if a == "" || a == "submit" || strings.HasPrefix(a, "submit ") || a == "exit_forfeit" {
				continue
			}
			if strings.HasPrefix(a, "str_replace_editor ") {
				f := strings.Fields(a)
				if len(f) >= 3 {
					if c, ok := editorCall(f[1], mapRoot(f[2], "/testbed")); ok {
						t.Calls = append(t.Calls, c)
					}
				}
				continue
			}
			t.Calls = append(t.Calls, bashCall(mapRoot(a, "/testbed")))
		}
		return []trajectory{t}, nil
	case "openhands":
		var d []struct {
			InstanceID string `json:"instance_id"`
			Messages   []struct {
				Role      string `json:"role"`
				Content   any    `json:"content"`
				ToolCalls []struct {
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		var out []trajectory
		for _, run := range d {
			t := trajectory{Session: src.Key + "/" + run.InstanceID, Source: src.Key}
			root := ""
			for _, m := range run.Messages {
				if s, ok := m.Content.(string); ok && m.Role == "user" && root == "" {
					if i := strings.Index(s, "<uploaded_files>\n"); i >= 0 {
						rest := s[i+len("<uploaded_files>\n"):]
						root = strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0])
					}
				}
				for _, tc := range m.ToolCalls {
					var a map[string]any
					if err := json.Unmarshal([]byte(tc.Function.Arguments), &a); err != nil {
						continue
					}
					switch tc.Function.Name {
					case "execute_bash":
						if cmd, _ := a["command"].(string); strings.TrimSpace(cmd) != "" {
							t.Calls = append(t.Calls, bashCall(mapRoot(cmd, root)))
						}
					case "str_replace_editor":
						sub, _ := a["command"].(string)
						p, _ := a["path"].(string)
						if c, ok := editorCall(sub, mapRoot(p, root)); ok {
							t.Calls = append(t.Calls, c)
						}
					}
				}
			}
			out = append(out, t)
		}
		return out, nil
	case "xmlfn":
		var d []struct {
			InstanceID string `json:"instance_id"`
			Messages   []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		var out []trajectory
		for _, run := range d {
			t := trajectory{Session: src.Key + "/" + run.InstanceID, Source: src.Key}
			for _, m := range run.Messages {
				s, _ := m.Content.(string)
				if m.Role != "assistant" {
					continue
				}
				for _, fn := range xmlFunction.FindAllStringSubmatch(s, -1) {
					params := map[string]string{}
					for _, p := range xmlParam.FindAllStringSubmatch(fn[2], -1) {
						params[p[1]] = strings.Trim(p[2], "\n")
					}
					switch fn[1] {
					case "bash":
						if cmd := strings.TrimSpace(params["command"]); cmd != "" {
							t.Calls = append(t.Calls, bashCall(mapRoot(cmd, "/testbed")))
						}
					case "str_replace_editor":
						if c, ok := editorCall(strings.TrimSpace(params["command"]), mapRoot(strings.TrimSpace(params["path"]), "/testbed")); ok {
							t.Calls = append(t.Calls, c)
						}
					}
				}
			}
			out = append(out, t)
		}
		return out, nil
	case "nebius":
		var d []struct {
			InstanceID string `json:"instance_id"`
			Trajectory []struct {
				Role string `json:"role"`
				Text string `json:"text"`
			} `json:"trajectory"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		var out []trajectory
		for _, run := range d {
			t := trajectory{Session: src.Key + "/" + run.InstanceID, Source: src.Key}
			root := ""
			for _, m := range run.Trajectory {
				if m.Role == "user" && root == "" {
					if m := curDir.FindStringSubmatch(m.Text); m != nil {
						root = m[1]
					}
				}
			}
			open := ""
			for _, m := range run.Trajectory {
				if m.Role != "ai" {
					continue
				}
				blocks := plainBlock.FindAllStringSubmatch(m.Text, -1)
				if len(blocks) == 0 {
					continue
				}
				a := strings.TrimSpace(blocks[len(blocks)-1][1])
				if a == "" {
					continue
				}
				c, ok, newOpen := sweAgent0Call(a, open, root)
				open = newOpen
				if !ok {
					continue
				}
				for k, v := range c.Args {
					if s, ok := v.(string); ok {
						c.Args[k] = mapRoot(s, root)
					}
				}
				t.Calls = append(t.Calls, c)
			}
			out = append(out, t)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown format %q", src.Format)
}

var (
	xmlFunction = regexp.MustCompile(`(?s)<function=([A-Za-z_]+)>(.*?)</function>`)
	xmlParam    = regexp.MustCompile(`(?s)<parameter=([A-Za-z_]+)>(.*?)</parameter>`)
	curDir      = regexp.MustCompile(`\(Current directory: (/[^)\s]*)\)`)
)

func bashCall(cmd string) call {
	return call{Tool: "Bash", Args: map[string]any{"command": cmd}}
}

// editorCall maps a file editor's command to the PDP's file tools.
func editorCall(sub, path string) (call, bool) {
	if path == "" {
		return call{}, false
	}
	switch sub {
	case "view":
		base := filepath.Base(path)
		if path == wsToken || !strings.Contains(base, ".") {
			return call{Tool: "LS", Args: map[string]any{"path": path}}, true
		}
		return call{Tool: "Read", Args: map[string]any{"file_path": path}}, true
	case "create":
		return call{Tool: "Write", Args: map[string]any{"file_path": path}}, true
	case "str_replace", "insert", "undo_edit", "edit":
		return call{Tool: "Edit", Args: map[string]any{"file_path": path}}, true
	}
	return call{}, false
}

// sweAgent0Call maps one SWE-agent 0.x action; open is the file the
// editor has open.
func sweAgent0Call(a, open, root string) (call, bool, string) {
	first, rest, _ := strings.Cut(a, "\n")
	f := strings.Fields(first)
	if len(f) == 0 {
		return call{}, false, open
	}
	abs := func(p string) string {
		p = strings.Trim(p, `"'`)
		if strings.HasPrefix(p, "/") {
			return p
		}
		base := root
		if base == "" {
			base = wsToken
		}
		if p == "." || p == "" {
			return base
		}
		if root == "" {
			return wsToken + "/" + strings.TrimPrefix(p, "./")
		}
		return root + "/" + strings.TrimPrefix(p, "./")
	}
	_ = rest
	switch f[0] {
	case "open":
		if len(f) < 2 {
			return call{}, false, open
		}
		p := abs(f[1])
		return call{Tool: "Read", Args: map[string]any{"file_path": p}}, true, p
	case "goto", "scroll_up", "scroll_down":
		if open == "" {
			return call{}, false, open
		}
		return call{Tool: "Read", Args: map[string]any{"file_path": open}}, true, open
	case "edit":
		if open == "" {
			return call{}, false, open
		}
		return call{Tool: "Edit", Args: map[string]any{"file_path": open}}, true, open
	case "create":
		if len(f) < 2 {
			return call{}, false, open
		}
		p := abs(f[1])
		return call{Tool: "Write", Args: map[string]any{"file_path": p}}, true, p
	case "search_dir", "search_file":
		args := map[string]any{}
		words := shellWords(strings.TrimSpace(strings.TrimPrefix(first, f[0])))
		if len(words) == 0 {
			return call{}, false, open
		}
		args["pattern"] = words[0]
		switch {
		case len(words) > 1:
			args["path"] = abs(words[1])
		case f[0] == "search_file" && open != "":
			args["path"] = open
		default:
			args["path"] = abs(".")
		}
		return call{Tool: "Grep", Args: args}, true, open
	case "find_file":
		words := shellWords(strings.TrimSpace(strings.TrimPrefix(first, f[0])))
		if len(words) == 0 {
			return call{}, false, open
		}
		args := map[string]any{"pattern": "**/" + words[0], "path": abs(".")}
		if len(words) > 1 {
			args["path"] = abs(words[1])
		}
		return call{Tool: "Glob", Args: args}, true, open
	case "submit", "exit_cost", "exit_context", "exit_format", "exit_error":
		return call{}, false, open
	}
	return bashCall(a), true, open
}

// shellWords splits s at white space, keeping quoted words whole.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	var q byte
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			q, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

func convertCorpus(src corpusSource, file string, raw []byte) ([]corpusCase, error) {
	switch src.Format {
	case "redcode":
		var d []struct {
			Index    string `json:"Index"`
			Language string `json:"Language"`
			Code     string `json:"Code"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		var out []corpusCase
		for _, c := range d {
			if !strings.EqualFold(c.Language, "bash") {
				continue
			}
			out = append(out, corpusCase{ID: c.Index, Kind: src.Kind, Source: "RedCode-Exec", Command: strings.TrimSpace(c.Code)})
		}
		return out, nil
	case "gtfobins":
		s := string(raw)
		if !strings.HasPrefix(s, "---") {
			return nil, nil
		}
		body := strings.TrimPrefix(s, "---")
		if i := strings.Index(body, "\n---"); i >= 0 {
			body = body[:i]
		}
		var d struct {
			Functions map[string][]struct {
				Code string `yaml:"code"`
			} `yaml:"functions"`
		}
		if err := yaml.Unmarshal([]byte(body), &d); err != nil {
			return nil, err
		}
		name := filepath.Base(file)
		var fns []string
		for fn := range d.Functions {
			fns = append(fns, fn)
		}
		sort.Strings(fns)
		var out []corpusCase
		for _, fn := range fns {
			for i, e := range d.Functions[fn] {
				if strings.TrimSpace(e.Code) == "" {
					continue
				}
				out = append(out, corpusCase{ID: fmt.Sprintf("%s/%s/%d", name, fn, i), Kind: src.Kind, Source: "GTFOBins", Command: strings.TrimSpace(e.Code)})
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown corpus format %q", src.Format)
}

// publicCase matches a case of pdp/public_corpus_test.go's publicCorpus:
// {"cmd", "suite", true}.
var publicCase = regexp.MustCompile("\\{(\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`), \"([a-z-]+)\", (true|false)\\}")

func harmlessCases(file string) ([]corpusCase, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []corpusCase
	seen := map[string]bool{}
	for _, m := range publicCase.FindAllStringSubmatch(string(raw), -1) {
		if m[3] != "true" {
			continue
		}
		var cmd string
		if strings.HasPrefix(m[1], "`") {
			cmd = strings.Trim(m[1], "`")
		} else if err := json.Unmarshal([]byte(m[1]), &cmd); err != nil {
			continue
		}
		if seen[cmd] {
			continue
		}
		seen[cmd] = true
		out = append(out, corpusCase{ID: fmt.Sprintf("public-corpus/%d", len(out)+1), Kind: "harmless", Source: m[2], Command: cmd})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no read-only cases found in %s", file)
	}
	return out, nil
}
