package evalcache

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

var (
	fuzzOnce     sync.Once
	fuzzCompiled compiled
	fuzzInputs   []ast.Value
)

// FuzzFunctionMemoAnswersAsOPA decides variants of the recorded inputs —
// another tool, another first word and argument of the command, another
// session rule and command rule, another level — with the built-in policy,
// once as OPA evaluates it and once with everything the engine keeps
// across evaluations (constants, session facts, function results), in one
// compiled policy for the whole run, so results kept from one variant
// meet the next. Every answer must be OPA's.
func FuzzFunctionMemoAnswersAsOPA(f *testing.F) {
	f.Add(uint8(0), "shell", "git", "status", "shell.exec", "allow", "git status", "READ_WRITE")
	f.Add(uint8(3), "Bash", "rm", "-rf", "fs.*", "deny", "rm", "FULL")
	f.Add(uint8(7), "read_file", "sudo", "ls", "mcp.*", "ask", "go test", "SMART")
	f.Fuzz(func(t *testing.T, pick uint8, tool, word, arg, pattern, action, prefix, level string) {
		fuzzOnce.Do(func() {
			fuzzCompiled = builtinCompiled(t)
			files, _ := filepath.Glob("../../testdata/inputs/*.json")
			for _, file := range files {
				raw, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				fuzzInputs = append(fuzzInputs, ast.MustParseTerm(string(raw)).Value)
			}
		})
		c := fuzzCompiled
		in := fuzzInputs[int(pick)%len(fuzzInputs)].(ast.Object).Copy()
		set := func(obj ast.Object, key string, v *ast.Term) ast.Object {
			out := ast.NewObject()
			obj.Foreach(func(k, x *ast.Term) {
				if !k.Equal(ast.StringTerm(key)) {
					out.Insert(k, x)
				}
			})
			out.Insert(ast.StringTerm(key), v)
			return out
		}
		if tool != "" {
			in = set(in, "tool", ast.StringTerm(tool))
		}
		if s, ok := in.Get(ast.StringTerm("session")).Value.(ast.Object); ok {
			rules := ast.NewObject(ast.Item(ast.StringTerm(pattern), ast.StringTerm(action)))
			commandRules := ast.NewObject(ast.Item(ast.StringTerm(prefix), ast.StringTerm(action)))
			s = set(s, "rules", ast.NewTerm(rules))
			s = set(s, "command_rules", ast.NewTerm(commandRules))
			if strings.ToUpper(level) == level && level != "" {
				s = set(s, "permission_level", ast.StringTerm(level))
			}
			in = set(in, "session", ast.NewTerm(s))
		}
		if sh := in.Get(ast.StringTerm("shell")); sh != nil {
			argv := ast.ArrayTerm(ast.StringTerm(word), ast.StringTerm(arg))
			literal := ast.ArrayTerm(ast.BooleanTerm(true), ast.BooleanTerm(true))
			cmd := ast.NewObject(ast.Item(ast.StringTerm("argv"), argv), ast.Item(ast.StringTerm("literal"), literal))
			shell := set(sh.Value.(ast.Object), "commands", ast.ArrayTerm(ast.NewTerm(cmd)))
			if parts, ok := shell.Get(ast.StringTerm("parts")).Value.(*ast.Array); ok && parts.Len() > 0 {
				part := parts.Elem(0).Value.(ast.Object)
				part = set(set(part, "argv", argv), "literal", literal)
				part = set(part, "text", ast.StringTerm(word+" "+arg))
				shell = set(shell, "parts", ast.ArrayTerm(ast.NewTerm(part)))
			}
			in = set(in, "shell", ast.NewTerm(shell))
		}
		for _, q := range []string{AnswerPoint, EntryPoint} {
			if plain, reused := c.eval(t, q, in, false), c.eval(t, q, in, true); plain != reused {
				t.Fatalf("%s on %v:\nOPA        %s\nthe engine %s", q, in, plain, reused)
			}
		}
	})
}
