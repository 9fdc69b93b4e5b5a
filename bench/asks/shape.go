package main

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// commandShape names a shell command by the programs it runs and how
// they are joined — "cd && grep | head", "cat <<EOF >" — so asks group
// by what the agent did rather than by its exact words.
func commandShape(cmd string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return "(does not parse)"
	}
	var parts []string
	for _, st := range f.Stmts {
		parts = append(parts, stmtShape(st))
	}
	s := strings.Join(parts, " ; ")
	if len(s) > 90 {
		s = s[:89] + "…"
	}
	if s == "" {
		return "(empty)"
	}
	return s
}

func stmtShape(st *syntax.Stmt) string {
	s := cmdShape(st.Cmd)
	if st.Negated {
		s = "! " + s
	}
	for _, r := range st.Redirs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			s += " <<EOF"
		case syntax.WordHdoc:
			s += " <<<"
		case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.ClbOut:
			if r.Word != nil && r.Word.Lit() == "/dev/null" {
				continue
			}
			s += " >"
		case syntax.RdrIn:
			s += " <"
		}
	}
	if st.Background {
		s += " &"
	}
	return s
}

func cmdShape(c syntax.Command) string {
	switch x := c.(type) {
	case nil:
		return ""
	case *syntax.CallExpr:
		if len(x.Args) == 0 {
			return "VAR="
		}
		w := x.Args[0]
		name := w.Lit()
		if name == "" {
			return "$…"
		}
		if strings.HasPrefix(name, "<ws>") || strings.HasPrefix(name, "./") {
			return "./" + path.Base(name)
		}
		if strings.Contains(name, "/") {
			name = path.Base(name)
		}
		// A wrapper's program says more than the wrapper.
		if (name == "timeout" || name == "env" || name == "sudo" || name == "nohup" || name == "time") && len(x.Args) > 1 {
			for _, a := range x.Args[1:] {
				l := a.Lit()
				if l == "" || strings.HasPrefix(l, "-") || strings.Contains(l, "=") || (name == "timeout" && isNumberish(l)) {
					continue
				}
				return name + " " + path.Base(l)
			}
		}
		return name
	case *syntax.BinaryCmd:
		return stmtShape(x.X) + " " + x.Op.String() + " " + stmtShape(x.Y)
	case *syntax.Subshell:
		return "( " + stmtsShape(x.Stmts) + " )"
	case *syntax.Block:
		return "{ " + stmtsShape(x.Stmts) + " }"
	case *syntax.IfClause:
		return "if"
	case *syntax.ForClause:
		return "for"
	case *syntax.WhileClause:
		return "while"
	case *syntax.CaseClause:
		return "case"
	case *syntax.FuncDecl:
		return "function"
	case *syntax.DeclClause:
		return x.Variant.Value
	case *syntax.TestClause:
		return "[["
	case *syntax.ArithmCmd:
		return "(("
	case *syntax.TimeClause:
		if x.Stmt != nil {
			return "time " + stmtShape(x.Stmt)
		}
		return "time"
	case *syntax.LetClause:
		return "let"
	case *syntax.CoprocClause:
		return "coproc"
	}
	return "?"
}

func stmtsShape(sts []*syntax.Stmt) string {
	var p []string
	for _, s := range sts {
		p = append(p, stmtShape(s))
	}
	return strings.Join(p, " ; ")
}

func isNumberish(s string) bool {
	s = strings.TrimRight(s, "smhd")
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && r != '.' {
			return false
		}
	}
	return true
}
