package pdp

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// Typed input: text a tool writes into a running process (Codex's
// write_stdin, a shell tool's write_stdin action). The process may be a
// shell, so every complete line typed is read as a shell command for the
// deny floor, command rules and path rules (docs/design.md §5, "Typed
// input"); the capability stays shell.stdin, whose level verdict decides
// the rest. A trailing partial line runs nothing yet: it is held, per
// session and process, and read with the text that completes it, so a
// command split over several writes is judged whole.

// maxHeldInput bounds the partial line held for one process; a longer
// one is unread (it may be any command) when it is completed.
const maxHeldInput = 4096

// maxHeldProcesses bounds how many processes' partial lines are held; the
// oldest is dropped first (docs/security.md says what that means).
const maxHeldProcesses = 16384

// typedInput holds each process's partial line between writes.
type typedInput struct {
	mu    sync.Mutex
	held  map[string]string
	order []string // keys in the order they were first held
}

func newTypedInput() *typedInput { return &typedInput{held: map[string]string{}} }

func (t *typedInput) get(key string) string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.held[key]
}

// set holds rest as the process's partial line ("" forgets it).
func (t *typedInput) set(key, rest string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if rest == "" {
		delete(t.held, key)
		return
	}
	if _, ok := t.held[key]; !ok {
		for len(t.held) >= maxHeldProcesses && len(t.order) > 0 {
			delete(t.held, t.order[0])
			t.order = t.order[1:]
		}
		t.order = append(t.order, key)
		if len(t.order) > 2*maxHeldProcesses {
			t.order = compactOrder(t.order, t.held)
		}
	}
	t.held[key] = rest
}

func compactOrder(order []string, held map[string]string) []string {
	out := order[:0]
	seen := map[string]bool{}
	for _, k := range order {
		if _, ok := held[k]; ok && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// typedKey names what a partial line is held for: the PDP session, not
// the process the tool's arguments name — a model chooses those words
// (an extra "pid", a process id as a string), so keying by them would
// let it start a line afresh. Partial lines to two processes of one
// session are read as one: stricter, never looser.
func typedKey(sessionID string) string { return sessionID }

// typedLines splits what is held and what is typed now into the
// complete lines a terminal would hand its program (each ended by a
// newline, a carriage return or ^O) and the partial line that is held
// for the next write. It applies the line editing a terminal and
// readline do (^H and DEL erase a character, ^W a word, ^U and ^C the
// line); a line that still holds a control character, an escape
// sequence or a history expansion may become another command in the
// terminal than its text shows: unread reports it.
func typedLines(held, typed string) (lines []string, rest string, unread string) {
	text := held + typed
	end := strings.LastIndexAny(text, "\n\r\x0f")
	if end < 0 {
		return nil, text, ""
	}
	rest = text[end+1:]
	for _, raw := range strings.FieldsFunc(text[:end+1], func(r rune) bool { return r == '\n' || r == '\r' || r == '\x0f' }) {
		line, why := editLine(raw)
		if why != "" && unread == "" {
			unread = why
		}
		if strings.TrimSpace(line) != "" {
			lines = append(lines, line)
		}
		// Which of the editing characters the process applies depends on
		// it (a terminal erases on DEL, not ^H; a pipe erases nothing):
		// the text as typed, editing characters dropped, is judged too.
		if plain := dropEditing(raw); plain != line && strings.TrimSpace(plain) != "" {
			lines = append(lines, plain)
		}
	}
	if len(held) > maxHeldInput && unread == "" {
		unread = "a line typed over several writes is longer than the limit of the analysis"
	}
	return lines, rest, unread
}

// editLine applies a terminal's line editing to one line and says why
// the result cannot be read as its text, if it cannot.
func editLine(raw string) (string, string) {
	if !utf8.ValidString(raw) {
		return raw, "the typed text is not valid UTF-8"
	}
	var out []rune
	why := ""
	for _, r := range raw {
		switch r {
		case '\b', 0x7f: // erase a character
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case 0x17: // ^W: erase a word
			for len(out) > 0 && (out[len(out)-1] == ' ' || out[len(out)-1] == '\t') {
				out = out[:len(out)-1]
			}
			for len(out) > 0 && out[len(out)-1] != ' ' && out[len(out)-1] != '\t' {
				out = out[:len(out)-1]
			}
		case 0x15, 0x03: // ^U, ^C: the line is discarded
			out = out[:0]
		case '\t':
			// readline completes a word on a tab: what it inserts is
			// not in the text.
			why = "the typed text holds a tab, which a terminal may complete into another word"
			out = append(out, r)
		default:
			if r < 0x20 || (r >= 0x80 && r < 0xa0) {
				why = "the typed text holds control characters or escape sequences (history, cursor keys), which a terminal may turn into another command"
			}
			out = append(out, r)
		}
	}
	line := string(out)
	if why == "" && historyExpansion(line) {
		why = "the typed text holds a history expansion (!…, ^…^), which an interactive shell replaces with an earlier command"
	}
	return line, why
}

// dropEditing is the line with the editing characters left out, as a
// program that applies none of them reads it.
func dropEditing(raw string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\b', 0x7f, 0x17, 0x15, 0x03:
			return -1
		}
		return r
	}, raw)
}

// historyExpansion: an interactive bash replaces "!" followed by
// anything but a blank, "=" or "(" (and a leading "^old^new") with text
// from its history.
func historyExpansion(line string) bool {
	if strings.HasPrefix(strings.TrimLeft(line, " "), "^") {
		return true
	}
	for i := 0; i < len(line); i++ {
		if line[i] != '!' {
			continue
		}
		if i+1 == len(line) {
			continue
		}
		switch line[i+1] {
		case ' ', '\t', '=', '(':
			continue
		}
		return true
	}
	return false
}
