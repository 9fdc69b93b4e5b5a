package pdp

import (
	"net/url"
	"strings"
)

// PathWord is a word of a shell command that may name a file: an
// operand, or a redirection's target. The path rules judge it as they
// judge a file tool's path; the policy says which access it implies.
type PathWord struct {
	// Value is the word after quote removal (the part after "=" of
	// NAME=VALUE and --opt=VALUE, and what follows a short option's
	// letter, are words of their own); for Glob, a path.Match pattern.
	Value string
	Glob  bool
	// Possible: the word is not literal (a parameter, a substitution,
	// braces, a tilde) or resolves against a directory the call does not
	// show (after cd $D): it may name any path.
	Possible bool
	// Command and Word locate an operand: the index in
	// ShellFacts.Commands and in its argv. Redirect is the operator of a
	// redirection's target, "" for an operand.
	Command, Word int
	Redirect      string
}

// maxPathWords bounds the words of one command judged one by one; the
// rest are one possible match of any path.
const maxPathWords = 1024

// shellPathWords are the words of every command the facts hold that may
// name a file, and the directories a cd in the command moves to
// (relative to the call's cwd, in order).
func shellPathWords(f ShellFacts) (words []PathWord, bases []string) {
	unknownDir := false
	for j, c := range f.Commands {
		if len(c.Argv) == 0 {
			continue
		}
		if !c.Literal[0] {
			// An opaque command, or a program named by an expansion: what
			// it reads and writes is not known.
			words = append(words, PathWord{Value: c.Argv[0], Possible: true, Command: j})
		}
		if dir, ok := cdTarget(c); ok && dir != "" {
			bases = append(bases, dir)
		} else if !ok {
			unknownDir = true
		}
		for i := 1; i < len(c.Argv); i++ {
			w := c.Argv[i]
			switch {
			case c.Literal[i]:
				for _, v := range operandValues(w) {
					words = append(words, PathWord{Value: v, Command: j, Word: i})
				}
			case i < len(c.Glob) && c.Glob[i] != "":
				words = append(words, PathWord{Value: c.Glob[i], Glob: true, Command: j, Word: i})
			default:
				words = append(words, PathWord{Value: w, Possible: true, Command: j, Word: i})
			}
		}
	}
	for _, r := range f.Redirects {
		if r.HereDoc || r.Dup || r.DevNull || r.Target == "" {
			continue
		}
		words = append(words, PathWord{Value: r.Target, Possible: !r.Literal, Redirect: r.Op})
	}
	for i := range words {
		switch {
		case f.WordsUnknown, i >= maxPathWords:
			words[i].Possible = true
		case words[i].Glob && f.GlobsAnyName:
			words[i].Possible = true
		case unknownDir && !words[i].Glob && !strings.HasPrefix(words[i].Value, "/"):
			words[i].Possible = true
		}
	}
	return words, bases
}

// unreadWords: a command that does not parse (or is over a limit) may
// name any path, read or written.
func unreadWords() []PathWord {
	return []PathWord{{Value: "<command that could not be read>", Possible: true, Command: -1}}
}

// operandValues are the paths a literal word may name: the word, the
// value of NAME=VALUE or --opt=VALUE, and what follows a short option's
// letter (-o.env). Longer than PATH_MAX, a word names no path.
func operandValues(w string) []string {
	var out []string
	add := func(v string) {
		if v != "" && len(v) <= 4096 {
			out = append(out, v)
		}
	}
	eq := strings.IndexByte(w, '=')
	switch {
	case strings.HasPrefix(w, "--"):
	case strings.HasPrefix(w, "-"):
		// A value may follow any letter of a cluster (-o.env, -Lf.env,
		// -xvC.git/hooks): every suffix after the second character.
		for k := 2; k < len(w) && k < 64; k++ {
			add(w[k:])
		}
	default:
		add(w)
	}
	if eq > 0 {
		add(w[eq+1:])
		if v := strings.TrimSpace(w[eq+1:]); v != w[eq+1:] {
			add(v) // wget -e 'post_file = .npmrc'
		}
	}
	for _, v := range out {
		if p, ok := fileURLPath(v); ok {
			add(p)
		}
	}
	// A file named inside a word: curl's @file and <file (-d @.env,
	// -F f=@id_rsa, --data-urlencode k@.npmrc, f=@key;type=text/plain,
	// f=@"key"), git's rev:path (HEAD:.env), scp's and rsync's host:path,
	// docker's -v file:target, socat's FILE:name,options.
	for k, n := 0, len(out); k < n; k++ {
		v := out[k]
		if i := strings.IndexAny(v, "@<"); i >= 0 && !strings.Contains(v, "://") {
			inner(add, v[i+1:])
		}
		if i := strings.IndexByte(v, ':'); i > 0 && !strings.Contains(v, "://") {
			inner(add, v[:i])
			inner(add, v[i+1:])
		}
	}
	return out
}

// inner adds a file named inside a word, and the same cut at curl's
// ;type= or socat's ,options, its quotes removed.
func inner(add func(string), v string) {
	add(v)
	if i := strings.IndexAny(v, ";,"); i > 0 {
		v = v[:i]
		add(v)
	}
	if t := strings.Trim(v, `"'`); t != v {
		add(t)
	}
}

// fileURLPath is the path a file: URL names, percent-decoded
// (file:///w/%2eenv is /w/.env).
func fileURLPath(w string) (string, bool) {
	if len(w) < 5 || !strings.EqualFold(w[:5], "file:") {
		return "", false
	}
	u, err := url.Parse(w)
	if err != nil || u.Path == "" {
		return "", false
	}
	return u.Path, true
}

// cdTarget is the directory a cd or pushd moves to: ok with "" for a
// command that is neither, ok false when the target is not known (cd
// alone, cd -, cd $D, popd).
func cdTarget(c ShellCommand) (string, bool) {
	name := strings.ToLower(c.Argv[0][strings.LastIndexByte(c.Argv[0], '/')+1:])
	switch name {
	case "cd", "pushd":
	case "popd":
		return "", false
	default:
		return "", true
	}
	for i := 1; i < len(c.Argv); i++ {
		switch w := c.Argv[i]; {
		case !c.Literal[i]:
			return "", false
		case w == "--":
			if i+1 < len(c.Argv) && c.Literal[i+1] && c.Argv[i+1] != "-" {
				return c.Argv[i+1], true
			}
			return "", false
		case w == "-":
			return "", false
		case strings.HasPrefix(w, "-"):
		default:
			return w, true
		}
	}
	return "", false
}
