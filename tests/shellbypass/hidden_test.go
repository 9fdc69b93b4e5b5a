package shellbypass_test

import (
	"fmt"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"github.com/toolperm/pdp/store/sqlite"
)

// hidden is one way to run `git push --force` that a reading of the
// command's literal words does not show as that command.
type hidden struct {
	name, cmd, note string
	// needs is a program besides bash that the run needs; the run is
	// skipped where it is not installed (the decisions are still made).
	needs string
	// decideOnly: the text cannot be run here as written (the note says
	// why); only the decisions are checked.
	decideOnly bool
	// env adds variables to the run's cleared environment.
	env []string
	// timeout ends a run that does not end by itself (default 5 s).
	timeout time.Duration
}

var hiddenCommands = []hidden{
	// bash's options before -c
	{name: "bash-o-posix", cmd: `bash -o posix -c 'git push --force'`, note: "-o takes an option name, so the body is not the word after bash's first option"},
	{name: "bash-O-extglob", cmd: `bash -O extglob -c 'git push --force'`, note: "-O takes a shopt name"},
	{name: "bash-plus-o-posix", cmd: `bash +o posix -c 'git push --force'`, note: "+o unsets an option, and also takes a name"},
	{name: "bash-rcfile", cmd: `bash --rcfile /dev/null -c 'git push --force'`, note: "a long option with an argument of its own"},
	{name: "bash-c-dashdash", cmd: `bash -c -- 'git push --force'`, note: "-- between -c and the body"},
	{name: "bash-norc", cmd: `bash --norc -c 'git push --force'`, note: "a long option before -c"},
	{name: "bash-ec", cmd: `bash -ec 'git push --force'`, note: "-c joined with another flag"},
	// other shells and names of bash
	{name: "rbash-c", cmd: `rbash -c 'git push --force'`, needs: "rbash", note: "restricted bash still runs a program found on PATH"},
	{name: "sh-c", cmd: `sh -c 'git push --force'`, needs: "sh", note: "sh (dash here) with a body"},
	{name: "abs-bash-c", cmd: `/usr/bin/bash -c 'git push --force'`, needs: "/usr/bin/bash", note: "the shell named by its path"},
	{name: "BASH-c", cmd: `BASH -c 'git push --force'`, decideOnly: true, note: "program names compare lower-cased; not runnable on a case-sensitive file system"},
	{name: "bash5-c", cmd: `bash5 -c 'git push --force'`, decideOnly: true, note: "program names compare without a version suffix; no bash5 here"},
	// words the shell makes at run time
	{name: "var-command", cmd: `c='git push --force'; $c`, note: "the words come from an unquoted expansion"},
	{name: "brace", cmd: `{git,push,--force}`, note: "brace expansion makes the three words"},
	{name: "ifs", cmd: `git${IFS}push${IFS}--force`, note: "field splitting of $IFS makes the three words"},
	{name: "set-args", cmd: `set -- git push --force; "$@"`, note: "the positional parameters are the command"},
	{name: "eval-var", cmd: `X='git push --force'; eval "$X"`, note: "eval of a variable's value"},
	{name: "bash-c-var", cmd: `X='git push --force'; bash -c "$X"`, note: "bash -c of a variable's value"},
	{name: "array", cmd: `a=(git push --force); "${a[@]}"`, note: "an array's elements are the command"},
	// env's split string
	{name: "env-S-tab", cmd: "env -S'git\tpush --force'", note: "env -S splits at a tab as well as a space"},
	{name: "env-S-apart", cmd: `env -S 'git push --force'`, note: "-S and its line as two words"},
	{name: "env-split-string", cmd: `env --split-string='git push --force'`, note: "the long form"},
	{name: "env-S-underscore", cmd: `env -S"git\_push --force"`, note: `GNU env reads \_ in a split string as a space`},
	{name: "env-iS", cmd: `env -iS'git push --force'`, decideOnly: true, note: "GNU env accepts -i and -S together; -i clears PATH, so it runs the system's git (execvp's default path), not the fake one on the test's PATH"},
	{name: "env-iS-path", cmd: `env -iS'PATH=${PATH} git push --force'`, note: "env -S expands ${PATH} before -i clears the environment, so the line starts with an assignment"},
	// code the shell reads from elsewhere
	{name: "trap", cmd: `trap 'git push --force' EXIT`, note: "a trap's code runs when the shell exits"},
	{name: "herestring-bash", cmd: `bash <<< 'git push --force'`, note: "bash reads its commands from stdin"},
	{name: "herestring-bash-s", cmd: `bash -s <<< 'git push --force'`, note: "the same with -s"},
	{name: "source-stdin", cmd: `source /dev/stdin <<< 'git push --force'`, note: "source of stdin"},
	{name: "dot-fd0", cmd: `. /dev/fd/0 <<< 'git push --force'`, note: ". of descriptor 0"},
	{name: "heredoc-bash", cmd: "bash <<'EOF'\ngit push --force\nEOF", note: "a quoted here-document fed to bash"},
	{name: "pipe-bash", cmd: `echo 'git push --force' | bash`, note: "a pipe into bash"},
	// wrappers
	{name: "nice", cmd: `nice git push --force`, note: "a wrapper"},
	{name: "timeout", cmd: `timeout 5 git push --force`, note: "a wrapper with an argument of its own"},
	{name: "nohup", cmd: `nohup git push --force`, note: "a wrapper"},
	{name: "xargs-herestring", cmd: `xargs git <<< 'push --force'`, note: "xargs takes the arguments from stdin"},
	{name: "xargs-pipe", cmd: `echo push --force | xargs git`, note: "the same through a pipe"},
	{name: "find-exec", cmd: `find . -maxdepth 0 -exec git push --force \;`, note: "find runs the command once, for ."},
	{name: "watch-e", cmd: `watch -n1 -e 'git push --force'`, needs: "watch", env: []string{"TERM=dumb"}, timeout: 3 * time.Second, note: "watch runs its line with sh -c until it fails (it needs a TERM; stopped by the timeout)"},
	// found by a red-team pass over the first version of this analysis
	{name: "bash-plus-c", cmd: `bash +c 'git push --force'`, note: "bash takes +c as -c"},
	{name: "sh-plus-ec", cmd: `sh +ec 'git push --force'`, needs: "sh", note: "so does dash, in a cluster"},
	{name: "bash-plus-s", cmd: `bash +s x <<< 'git push --force'`, note: "+s reads stdin"},
	{name: "bash-single-dash-long", cmd: `bash -posix -c 'git push --force'`, note: "bash takes its long options after one dash"},
	{name: "bash-single-dash-rcfile", cmd: `bash -rcfile /dev/null -c 'git push --force'`, note: "a one-dash long option with an argument"},
	{name: "fd-dup-stdin", cmd: `bash 3<<<'git push --force' <&3`, note: "a here-string moved onto stdin"},
	{name: "exec-stdin", cmd: `exec <<<'git push --force'; bash`, note: "exec sets stdin for the rest of the call"},
	{name: "coproc-name", cmd: `coproc bash <<< 'git push --force'; wait`, note: "the parser reads bash as the coprocess's name"},
	{name: "test-subscript", cmd: `[[ 'a[$(git push --force)]' -eq 0 ]]`, note: "arithmetic of a string runs the substitution in its subscript"},
	{name: "arith-var", cmd: `x='a[$(git push --force)]'; echo $((x))`, note: "the same through a variable"},
	{name: "prompt-expansion", cmd: `x='$(git push --force)'; echo "${x@P}"`, note: "prompt expansion runs substitutions"},
	{name: "ps4", cmd: `PS4='$(git push --force)'; set -x; true`, note: "PS4 is expanded before each traced command"},
	{name: "printf-v-subscript", cmd: `printf -v 'a[$(git push --force)]' x`, note: "printf -v assigns to a name whose subscript is evaluated"},
	{name: "index-var", cmd: `x='b[$(git push --force)]'; a[x]=1`, note: "an array index is arithmetic on a variable"},
	{name: "mapfile-callback", cmd: `mapfile -c1 -C 'git push --force #' a <<< x`, note: "mapfile's callback is code"},
	{name: "alias", cmd: "shopt -s expand_aliases\nalias x='git push --force'\nx", note: "an alias defined in the call"},
	{name: "bash-func-env", cmd: `env 'BASH_FUNC_x%%=() { git push --force; }' bash -c x`, note: "an exported function in the environment"},
	{name: "bash-env", cmd: `BASH_ENV=/dev/stdin bash -c : <<< 'git push --force'`, note: "BASH_ENV names a file bash runs first"},
	{name: "proc-self-exe", cmd: `/proc/self/exe -c 'git push --force'`, note: "/proc/self/exe is the shell running the call"},
	{name: "hash-p", cmd: `hash -p /bin/bash x; x -c 'git push --force'`, note: "hash -p names a program anew"},
	{name: "ssh-agent", cmd: `ssh-agent bash <<< 'git push --force'`, note: "a wrapper on the policy's list"},
	{name: "watch-unparsable", cmd: "watch -n1 -t 'git push --force\nfi'", needs: "watch", env: []string{"TERM=dumb"}, timeout: 3 * time.Second, note: "watch runs the line before the syntax error"},
}

// ruleSetting is a session of one of the three settings where nothing
// but an explicit deny or ask stands before a shell command.
var ruleSettings = []struct {
	name   string
	fields map[string]any
}{
	{"FULL", map[string]any{"permission_level": "FULL"}},
	{"allow-all", map[string]any{"mode": "allow-all"}},
	{"CLOUD", map[string]any{"execution_mode": "CLOUD"}},
}

// ruleLayer is where the `git push --force` rule is written, and which
// decisions meet it.
type ruleLayer struct {
	name   string
	svc    *service
	action string
	// session fields that carry the rule (nil for the policy layer)
	commandRules map[string]any
}

func (l ruleLayer) sessionID(setting string) string { return l.name + "." + setting }

// ok reports whether a decision meets the rule: a deny rule denies or
// asks, an ask rule asks.
func (l ruleLayer) ok(decision any) bool {
	if l.action == "ask" {
		return decision == "ask"
	}
	return decision == "deny" || decision == "ask"
}

// ruleLayers starts the services and creates a session per layer and
// setting: the rule as the session's command rule (deny, ask) on the
// built-in policy, and as data.commands of a policy directory (deny, ask).
func ruleLayers(t *testing.T) []ruleLayer {
	t.Helper()
	builtin := startService(t, builtinPolicy(t), sqlite.Options{})
	layers := []ruleLayer{
		{name: "session-deny", svc: builtin, action: "deny", commandRules: map[string]any{deniedCommand: "deny"}},
		{name: "session-ask", svc: builtin, action: "ask", commandRules: map[string]any{deniedCommand: "ask"}},
		{name: "policy-deny", svc: startService(t, policyWithCommands(t, map[string]string{deniedCommand: "deny"}), sqlite.Options{}), action: "deny"},
		{name: "policy-ask", svc: startService(t, policyWithCommands(t, map[string]string{deniedCommand: "ask"}), sqlite.Options{}), action: "ask"},
	}
	for _, l := range layers {
		for _, st := range ruleSettings {
			fields := map[string]any{}
			for k, v := range st.fields {
				fields[k] = v
			}
			if l.commandRules != nil {
				fields["command_rules"] = l.commandRules
			}
			l.svc.createSession(t, l.sessionID(st.name), fields)
		}
	}
	// Each layer must meet the plain command, or nothing below means much.
	for _, l := range layers {
		for _, st := range ruleSettings {
			d := l.svc.decide(t, l.sessionID(st.name), deniedCommand)
			expectDecision(t, d, l.action, "config")
		}
	}
	return layers
}

// TestHiddenCommandsMeetCommandRules: each construct runs `git push
// --force` in real bash (shown with a fake git that records its
// arguments), and a `git push --force` command rule — deny or ask, in the
// session or in the policy — is never answered with an allow for it at
// FULL, in allow-all or in CLOUD, where only that rule stands before it.
func TestHiddenCommandsMeetCommandRules(t *testing.T) {
	layers := ruleLayers(t)
	for _, h := range hiddenCommands {
		t.Run(h.name, func(t *testing.T) {
			t.Run("runs", func(t *testing.T) {
				if h.decideOnly {
					t.Skipf("decided only: %s", h.note)
				}
				if h.needs != "" {
					if _, err := exec.LookPath(h.needs); err != nil {
						t.Skipf("%s is not installed: %v", h.needs, err)
					}
				}
				timeout := h.timeout
				if timeout == 0 {
					timeout = 5 * time.Second
				}
				calls, err := newSandbox(t).run(h.cmd, timeout, h.env...)
				if err != nil {
					t.Fatal(err)
				}
				if !pushedForce(calls) {
					t.Errorf("%q did not run git push --force in bash (git calls: %q); %s", h.cmd, calls, h.note)
				}
			})
			t.Run("decided", func(t *testing.T) {
				for _, l := range layers {
					for _, st := range ruleSettings {
						d := l.svc.decide(t, l.sessionID(st.name), h.cmd)
						if !l.ok(d["decision"]) {
							t.Errorf("%s rule, %s: %q is %v (source %v, rule %v: %v); want %s", l.name, st.name, h.cmd, d["decision"], d["source"], d["rule"], d["reason"], want(l.action))
						}
					}
				}
			})
		})
	}
}

func want(action string) string {
	if action == "ask" {
		return "ask"
	}
	return "deny or ask"
}

// TestHiddenCommandControls: what the rule must not stop, before the
// change and after it.
func TestHiddenCommandControls(t *testing.T) {
	s := startService(t, builtinPolicy(t), sqlite.Options{})
	s.createSession(t, "full", map[string]any{"permission_level": "FULL", "command_rules": map[string]any{deniedCommand: "deny"}})
	for _, c := range []struct{ cmd, decision, source string }{
		{"git status && go vet ./...", "allow", "mode"},
		{"ls -la | wc -l", "allow", "mode"},
		{"git push origin main", "allow", "mode"},
		{"git push --force", "deny", "config"},
	} {
		t.Run(fmt.Sprintf("FULL %s", c.cmd), func(t *testing.T) {
			expectDecision(t, s.decide(t, "full", c.cmd), c.decision, c.source)
		})
	}

	t.Run("READ_ONLY grant", func(t *testing.T) {
		s.createSession(t, "ro", map[string]any{"command_rules": map[string]any{deniedCommand: "deny"}})
		ask := s.decide(t, "ro", "make test")
		expectDecision(t, ask, "ask", "level")
		if ask["fingerprint"] != "make test" || ask["grantable"] != true {
			t.Fatalf("make test at READ_ONLY: %v", ask)
		}
		s.mustStatus(t, http.StatusOK, "POST", "/v1/decisions/"+ask["decision_id"].(string)+"/answer", map[string]any{"answer": "allow_session"})
		expectDecision(t, s.decide(t, "ro", "make test --jobs=2"), "allow", "session-grant")
	})
}
