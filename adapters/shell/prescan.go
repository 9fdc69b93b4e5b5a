package shell

import (
	"strings"

	"github.com/toolperm/pdp/pdp"
)

// The parser recurses once per level of brackets, and deep brackets are
// slow to parse (64 KiB of "(" takes it over a second). checkNesting
// refuses them before the parser sees them: it follows quotes, comments
// and here-documents as bash does and counts how deep (, $(, <(, >(,
// {, ${, $((, (( and backticks nest. The exact limit is enforced on the
// parsed tree (measure); this guard only keeps the parser's recursion
// shallow, so it allows twice MaxDepth and counts as written (a literal
// "{" counts, a "$((" counts once).

type frameKind uint8

const (
	frameParen    frameKind = iota // ( $( <( >( — code until )
	frameBrace                     // { ${ — until }
	frameArith                     // (( $(( — until ))
	frameBacktick                  // ` — code until `
	frameDquote                    // " — text until ", no level of its own
	frameCase                      // case — its patterns end in a bare ), so a ) here closes nothing
)

type heredoc struct {
	delim  string
	quoted bool // a quoted delimiter: the body is plain text
	strip  bool // <<- strips leading tabs
}

type nestScanner struct {
	s       string
	max     int
	stack   []frameKind
	depth   int // frames on the stack other than double quotes
	pending []heredoc
}

// checkNesting refuses a text whose brackets nest deeper than max.
func checkNesting(s string, max int) *pdp.Error {
	sc := &nestScanner{s: s, max: max}
	if sc.scan(0, len(s), false) {
		return pdp.Invalid(LimitDepth, "brackets nested deeper than %d levels", max)
	}
	return nil
}

func (sc *nestScanner) push(k frameKind) bool {
	sc.stack = append(sc.stack, k)
	if k != frameDquote {
		sc.depth++
	}
	return sc.depth > sc.max
}

func (sc *nestScanner) top() (frameKind, bool) {
	if len(sc.stack) == 0 {
		return frameParen, false
	}
	return sc.stack[len(sc.stack)-1], true
}

func (sc *nestScanner) pop() {
	if k := sc.stack[len(sc.stack)-1]; k != frameDquote {
		sc.depth--
	}
	sc.stack = sc.stack[:len(sc.stack)-1]
}

// inCode reports whether the innermost frame reads shell code (the top
// level, parentheses, backticks) rather than quoted text.
func (sc *nestScanner) inCode() bool {
	k, ok := sc.top()
	return !ok || k == frameParen || k == frameBacktick || k == frameCase
}

// scan reads s[from:to] and reports whether the nesting went too deep.
// hdoc is set for the body of a here-document with an unquoted
// delimiter, which reads like text in double quotes.
func (sc *nestScanner) scan(from, to int, hdoc bool) bool {
	base := len(sc.stack)
	s := sc.s
	for i := from; i < to; i++ {
		c := s[i]
		k, _ := sc.top()
		quoted := hdoc && len(sc.stack) == base || k == frameDquote
		switch {
		case c == '\\':
			i++ // the next byte is escaped, whatever it is
		case c == '$' && i+1 < to && (s[i+1] == '(' || s[i+1] == '{'):
			kind := frameParen
			if s[i+1] == '{' {
				kind = frameBrace
			} else if i+2 < to && s[i+2] == '(' {
				kind = frameArith
				i++
			}
			i++
			if sc.push(kind) {
				return true
			}
		case c == '`':
			if k == frameBacktick {
				sc.pop()
			} else if sc.push(frameBacktick) {
				return true
			}
		case c == '"' && !(hdoc && len(sc.stack) == base):
			if k == frameDquote {
				sc.pop()
			} else if k != frameArith && sc.push(frameDquote) {
				return true
			}
		case quoted:
			// text: only $( ${ ` and the closing quote matter
		case c == '\'':
			if k == frameArith {
				continue
			}
			if i > from && s[i-1] == '$' {
				i = skipANSIQuote(s, i+1, to)
			} else if j := strings.IndexByte(s[i+1:to], '\''); j >= 0 {
				i += j + 1
			} else {
				i = to
			}
		case c == '#' && sc.inCode() && wordStart(s, i, from):
			if j := strings.IndexByte(s[i:to], '\n'); j >= 0 {
				i += j - 1 // the newline itself ends the comment
			} else {
				i = to
			}
		case c == '(':
			kind := frameParen
			if k != frameArith && i+1 < to && s[i+1] == '(' {
				kind = frameArith
				i++
			}
			if sc.push(kind) {
				return true
			}
		case c == ')':
			if k == frameArith && i+1 < to && s[i+1] == ')' {
				sc.pop()
				i++
			} else if k == frameParen && len(sc.stack) > base {
				sc.pop()
			}
		case c == '{':
			if sc.push(frameBrace) {
				return true
			}
		case c == '}':
			if k == frameBrace && len(sc.stack) > base {
				sc.pop()
			}
		case c == '<' && k != frameArith && strings.HasPrefix(s[i:to], "<<<"):
			i += 2 // a here-string
		case c == '<' && k != frameArith && i+1 < to && s[i+1] == '<':
			i = sc.readHeredoc(i+2, to)
		case c == 'c' && sc.inCode() && wordStart(s, i, from) && strings.HasPrefix(s[i:to], "case") &&
			i+4 < to && (s[i+4] == ' ' || s[i+4] == '\t' || s[i+4] == '\n'):
			// The case frame is never closed (an esac may be a plain
			// word): each case costs a level to the end of its frame.
			if sc.push(frameCase) {
				return true
			}
			i += 3
		case c == '\n' && len(sc.pending) > 0:
			var deep bool
			if i, deep = sc.bodies(i+1, to); deep {
				return true
			}
			i--
		}
	}
	return false
}

// readHeredoc notes the delimiter of a here-document whose operator ends
// before i, and returns where its word ends.
func (sc *nestScanner) readHeredoc(i, to int) int {
	h := heredoc{}
	if i < to && sc.s[i] == '-' {
		h.strip = true
		i++
	}
	for i < to && (sc.s[i] == ' ' || sc.s[i] == '\t') {
		i++
	}
	var delim strings.Builder
	for ; i < to; i++ {
		c := sc.s[i]
		if strings.IndexByte(" \t\n;&|()<>", c) >= 0 {
			break
		}
		if c == '\'' || c == '"' || c == '\\' {
			h.quoted = true
			continue
		}
		delim.WriteByte(c)
	}
	h.delim = delim.String()
	sc.pending = append(sc.pending, h)
	return i - 1
}

// bodies reads the bodies of the pending here-documents, which start at
// i, and returns where the text after them starts.
func (sc *nestScanner) bodies(i, to int) (int, bool) {
	pending := sc.pending
	sc.pending = nil
	for _, h := range pending {
		start := i
		end := to
		for i < to {
			eol := strings.IndexByte(sc.s[i:to], '\n')
			next := to
			if eol >= 0 {
				next = i + eol + 1
			}
			line := strings.TrimSuffix(sc.s[i:next], "\n")
			if h.strip {
				line = strings.TrimLeft(line, "\t")
			}
			if line == h.delim {
				end = i
				i = next
				break
			}
			i = next
		}
		if !h.quoted && sc.scan(start, end, true) {
			return i, true
		}
	}
	return i, false
}

func skipANSIQuote(s string, i, to int) int {
	for ; i < to; i++ {
		switch s[i] {
		case '\\':
			i++
		case '\'':
			return i
		}
	}
	return to
}

// wordStart reports whether s[i] begins a word, where # starts a comment.
func wordStart(s string, i, from int) bool {
	return i == from || strings.IndexByte(" \t\n;&|()<>", s[i-1]) >= 0
}
