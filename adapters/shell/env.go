package shell

import "strings"

// envCommand gives the command GNU env runs when its words carry a
// command line of their own (-S, -SLINE, --split-string=LINE, or an
// abbreviation of it): the line split as env splits it, with env's
// options, NAME=VALUE words and the words after it. ok is false when
// env's words cannot be read (an option env does not have, a word that
// is not literal in option position, a line env refuses). Without a
// split string the command has no words: env's own words already are
// what it runs, which the policy looks at suffix by suffix.
func envCommand(argv []string, literal []bool) (Command, bool) {
	words := append([]string(nil), argv[1:]...)
	lits := append([]bool(nil), literal[1:]...)
	split := false
	// take removes the first k words.
	take := func(k int) { words, lits = words[k:], lits[k:] }
	// insert puts a split line's words in front of the rest, where env
	// reads them as options and command words again.
	insert := func(line string) bool {
		w, l, ok := splitString(line)
		if !ok {
			return false
		}
		words, lits = append(w, words...), append(l, lits...)
		split = true
		return true
	}
options:
	for len(words) > 0 {
		w := words[0]
		if !lits[0] {
			if !split {
				return Command{}, true // the suffixes are judged as they are
			}
			return Command{}, false
		}
		switch {
		case w == "--":
			take(1)
			break options
		case w == "-":
			take(1)
			break options
		case strings.HasPrefix(w, "--"):
			name, value, hasValue := strings.Cut(w[2:], "=")
			opt, ok := envLongOption(name)
			if !ok {
				return Command{}, false
			}
			take(1)
			if opt.arg == argRequired && !hasValue {
				if len(words) == 0 || !lits[0] {
					return Command{}, false
				}
				value, hasValue = words[0], true
				take(1)
			}
			if opt.name == "split-string" && !insert(value) {
				return Command{}, false
			}
		case len(w) > 1 && w[0] == '-':
			take(1)
			for k := 1; k < len(w); k++ {
				c := w[k]
				if strings.IndexByte("i0v \t", c) >= 0 {
					continue
				}
				if strings.IndexByte("CSua", c) < 0 {
					return Command{}, false
				}
				value := w[k+1:]
				if value == "" {
					if len(words) == 0 || !lits[0] {
						return Command{}, false
					}
					value = words[0]
					take(1)
				}
				if c == 'S' && !insert(value) {
					return Command{}, false
				}
				break
			}
		default:
			break options
		}
	}
	if !split {
		return Command{}, true
	}
	for len(words) > 0 && lits[0] && strings.Contains(words[0], "=") {
		take(1)
	}
	if len(words) == 0 {
		return Command{}, true
	}
	return Command{Argv: words, Literal: lits}, true
}

type envArg uint8

const (
	argNone envArg = iota
	argRequired
	argOptional
)

type envOption struct {
	name string
	arg  envArg
}

var envLongOptions = []envOption{
	{"argv0", argRequired}, {"ignore-environment", argNone}, {"null", argNone}, {"unset", argRequired},
	{"chdir", argRequired}, {"split-string", argRequired}, {"block-signal", argOptional},
	{"default-signal", argOptional}, {"ignore-signal", argOptional}, {"list-signal-handling", argNone},
	{"debug", argNone}, {"help", argNone}, {"version", argNone},
}

// envLongOption finds a long option by its name or, as getopt_long
// does, by a prefix of exactly one name.
func envLongOption(name string) (envOption, bool) {
	var found []envOption
	for _, o := range envLongOptions {
		if o.name == name {
			return o, true
		}
		if name != "" && strings.HasPrefix(o.name, name) {
			found = append(found, o)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return envOption{}, false
}

// splitString splits env's -S line as GNU env does: white space (space,
// tab, newline, vertical tab, form feed, carriage return) separates
// words outside quotes; single quotes keep everything but \\ and \';
// double quotes allow escapes; \_ separates outside double quotes and is
// a space inside them; \c ends the line; \t \n \v \f \r \" \# \$ \' \\
// are escapes and any other backslash is an error; # starts a comment at
// the start of a word; ${NAME} expands (the word is then not literal)
// and any other $ is an error. ok is false on an error or an unclosed
// quote, where env runs nothing.
func splitString(s string) (words []string, literal []bool, ok bool) {
	var cur strings.Builder
	inWord, lit := false, true
	sq, dq := false, false
	end := func() {
		if inWord {
			words, literal = append(words, cur.String()), append(literal, lit)
		}
		cur.Reset()
		inWord, lit = false, true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case sq:
			if c == '\'' {
				sq = false
			} else if c == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '\'') {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' && !dq:
			sq, inWord = true, true
		case c == '"':
			dq, inWord = !dq, true
		case !dq && strings.IndexByte(" \t\n\v\f\r", c) >= 0:
			end()
		case c == '#' && !dq && !inWord:
			end()
			return words, literal, true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, nil, false
			}
			i++
			switch e := s[i]; e {
			case '_':
				if dq {
					cur.WriteByte(' ')
				} else {
					end()
				}
			case 'c':
				if dq {
					return nil, nil, false
				}
				end()
				return words, literal, true
			case 't', 'n', 'v', 'f', 'r':
				cur.WriteByte(map[byte]byte{'t': '\t', 'n': '\n', 'v': '\v', 'f': '\f', 'r': '\r'}[e])
				inWord = true
			case '"', '#', '$', '\'', '\\':
				cur.WriteByte(e)
				inWord = true
			default:
				return nil, nil, false
			}
		case c == '$':
			j := strings.IndexByte(s[i:], '}')
			if i+1 >= len(s) || s[i+1] != '{' || j < 0 {
				return nil, nil, false
			}
			cur.WriteString(s[i : i+j+1])
			i += j
			inWord, lit = true, false
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if sq || dq {
		return nil, nil, false
	}
	end()
	return words, literal, true
}
