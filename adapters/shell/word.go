package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// wordValue returns the word after quote removal and whether it is
// literal: it expands to exactly that text wherever it runs. A word with
// any expansion returns its source text and false.
func wordValue(w *syntax.Word) (string, bool) {
	var b strings.Builder
	literal := true
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if hasExpansionChars(p.Value, i == 0) {
				literal = false
			}
			b.WriteString(unescapeUnquoted(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				literal = false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				literal = false
			}
			for _, inner := range p.Parts {
				lit, ok := inner.(*syntax.Lit)
				if !ok {
					literal = false
					continue
				}
				b.WriteString(unescapeDoubleQuoted(lit.Value))
			}
		default:
			literal = false
		}
	}
	if !literal {
		var src strings.Builder
		syntax.NewPrinter().Print(&src, w)
		return src.String(), false
	}
	return b.String(), true
}

// hasExpansionChars reports unquoted text the shell would still expand:
// globs, braces, and a leading tilde.
func hasExpansionChars(lit string, first bool) bool {
	if first && strings.HasPrefix(lit, "~") {
		return true
	}
	for i := 0; i < len(lit); i++ {
		switch lit[i] {
		case '\\':
			i++ // an escaped character is literal
		case '*', '?', '{', '}':
			return true
		case '[':
			// A bracket starts a class only with a ] after it: the test
			// command [ is a plain word.
			if strings.IndexByte(lit[i+1:], ']') >= 0 {
				return true
			}
		}
	}
	return false
}

func unescapeUnquoted(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unescapeDoubleQuoted(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// globPattern returns a word that is not literal only because of
// unquoted glob characters (* ? [) as a pattern in path.Match syntax:
// quoted and escaped text stays literal (escaped), the wildcards stay
// wild. ok is false for a word with any other expansion (parameters,
// substitutions, braces, a tilde).
func globPattern(w *syntax.Word) (string, bool) {
	var b strings.Builder
	wild := false
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(p.Value, "~") {
				return "", false
			}
			for j := 0; j < len(p.Value); j++ {
				c := p.Value[j]
				switch c {
				case '\\':
					if j+1 < len(p.Value) {
						j++
						if p.Value[j] != '\n' {
							b.WriteByte('\\')
							b.WriteByte(p.Value[j])
						}
					}
				case '{', '}':
					return "", false
				case '*', '?':
					wild = true
					b.WriteByte(c)
				case '[':
					if strings.IndexByte(p.Value[j+1:], ']') >= 0 {
						wild = true
						b.WriteByte(c)
					} else {
						b.WriteString(`\[`)
					}
				default:
					b.WriteByte(c)
				}
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(escapeGlob(p.Value))
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, inner := range p.Parts {
				lit, ok := inner.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(escapeGlob(unescapeDoubleQuoted(lit.Value)))
			}
		default:
			return "", false
		}
	}
	return b.String(), wild
}

// escapeGlob escapes the characters path.Match reads as wildcards.
func escapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?[\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
