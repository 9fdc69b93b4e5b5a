package pdp_test

import (
	"context"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/toolperm/pdp/pdp"
)

// FuzzGrantability decides arbitrary shell commands through the engine
// and the real policy. Whenever the answer carries a fingerprint, an
// independent check must agree: the text is exactly one simple command
// — no operator, redirection, assignment, substitution or keyword — whose
// first two words are plain literals, and the fingerprint is those words
// (the second quoted when it holds white space).
func FuzzGrantability(f *testing.F) {
	for _, seed := range bypasses {
		f.Add(seed)
	}
	for _, seed := range []string{"git status", "npm test", "'git' status", "g\\it status", "git status 2>&1", "git status # x"} {
		f.Add(seed)
	}
	e := newEngine(f, pdp.Components{})
	session := &pdp.SessionTree{Workspace: "/w", Grants: []pdp.Grant{{Capability: "shell.exec", Fingerprint: "git status"}}}
	f.Fuzz(func(t *testing.T, cmd string) {
		d, err := e.Decide(context.Background(), shellCall(cmd, session))
		if err != nil {
			t.Fatalf("Decide(%q): %v", cmd, err)
		}
		if d.Fingerprint == nil {
			if d.Source == "session-grant" || (d.Grantable && len(d.Parts) == 0) {
				t.Fatalf("%q: allowed by a grant or grantable without a fingerprint: %+v", cmd, d)
			}
			return
		}
		w0, w1, ok := plainCommand(cmd)
		if !ok {
			t.Fatalf("%q got fingerprint %q but is not one plain command", cmd, *d.Fingerprint)
		}
		if *d.Fingerprint != strings.TrimSpace(w0+" "+fingerprintArg(w1)) {
			t.Fatalf("%q: fingerprint %q, words %q %q", cmd, *d.Fingerprint, w0, w1)
		}
	})
}

// fingerprintArg is a second word as a fingerprint names it: quoted as
// the shell would quote it when it holds white space.
func fingerprintArg(w string) string {
	if !strings.ContainsAny(w, " \t\n\f\r") { // RE2's \s, as the policy tests it
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// plainCommand is the independent check: it re-parses the command and
// accepts only a single simple command whose first two words are made of
// literal text and quotes alone.
func plainCommand(cmd string) (string, string, bool) {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil || len(file.Stmts) != 1 {
		return "", "", false
	}
	st := file.Stmts[0]
	if st.Negated || st.Background || st.Coprocess {
		return "", "", false
	}
	for _, r := range st.Redirs {
		if r.Op != syntax.DplOut && r.Op != syntax.DplIn && !devNull(r) {
			return "", "", false
		}
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) < 1 {
		return "", "", false
	}
	var words [2]string
	for i := 0; i < min(2, len(call.Args)); i++ {
		for j, part := range call.Args[i].Parts {
			switch p := part.(type) {
			case *syntax.Lit:
				// A Lit is literal text but for globbing, braces, and a
				// tilde that starts the word.
				if hasUnescaped(p.Value, "*?{}") || hasClass(p.Value) || (j == 0 && strings.HasPrefix(p.Value, "~")) {
					return "", "", false
				}
			case *syntax.SglQuoted:
				if p.Dollar {
					return "", "", false
				}
			case *syntax.DblQuoted:
				for _, in := range p.Parts {
					if _, lit := in.(*syntax.Lit); !lit {
						return "", "", false
					}
				}
			default:
				return "", "", false
			}
		}
		// Quote removal as mvdan.cc/sh's own expander does it.
		fields, err := expand.Fields(&expand.Config{}, call.Args[i])
		if err != nil || len(fields) != 1 {
			return "", "", false
		}
		words[i] = fields[0]
	}
	w0, w1 := words[0], words[1]
	if strings.HasPrefix(w1, "-") && !optionPrograms[w0] {
		return "", "", false
	}
	// Every simple command anywhere else in the text would have shown up
	// as another statement or a substitution; there must be none.
	calls := 0
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CallExpr:
			calls++
		case *syntax.CmdSubst, *syntax.ProcSubst:
			calls += 100
		}
		return true
	})
	return w0, w1, calls == 1
}

// optionPrograms are the programs whose options may be a fingerprint's
// second word (policy data shell.option_programs).
var optionPrograms = map[string]bool{"ls": true, "cat": true, "head": true, "tail": true, "wc": true, "du": true, "df": true,
	"echo": true, "pwd": true, "grep": true, "egrep": true, "fgrep": true, "diff": true, "stat": true, "which": true,
	"whoami": true, "id": true, "uname": true, "ps": true, "cut": true, "nl": true, "basename": true, "dirname": true,
	"realpath": true, "readlink": true, "jq": true}

// devNull reports a redirection that reads or writes exactly /dev/null.
func devNull(r *syntax.Redirect) bool {
	if r.Hdoc != nil || r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc || r.Word == nil || len(r.Word.Parts) != 1 {
		return false
	}
	lit, ok := r.Word.Parts[0].(*syntax.Lit)
	return ok && lit.Value == "/dev/null"
}

// hasClass reports an unescaped [ with a ] after it: a bracket class (a
// [ alone, as in the test command, is a plain character).
func hasClass(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				return true
			}
		}
	}
	return false
}

// hasUnescaped reports a character of chars not preceded by a backslash.
func hasUnescaped(s, chars string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if strings.IndexByte(chars, s[i]) >= 0 {
			return true
		}
	}
	return false
}
