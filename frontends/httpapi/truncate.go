package httpapi

import (
	"unicode/utf8"

	"github.com/toolperm/pdp/api"
)

// listDecision is rec as a list shows it: every argument string, and the
// fingerprint, cwd, reason and each part's text and fingerprint (which
// repeat parts of the call), cut to limit bytes. rec is not changed.
func listDecision(rec api.Event, limit int) api.ListedEvent {
	item := api.ListedEvent{Event: rec}
	var cut [6]bool
	item.Args, cut[0] = truncateArgs(rec.Args, limit)
	item.Cwd, cut[1] = truncateString(rec.Cwd, limit)
	item.Reason, cut[2] = truncateString(rec.Reason, limit)
	item.Fingerprint, cut[3] = truncateOptional(rec.Fingerprint, limit)
	item.Parts, cut[4] = truncateParts(rec.Parts, limit)
	item.WouldGrant, cut[5] = truncateStrings(rec.WouldGrant, limit)
	item.Truncated = cut[0] || cut[1] || cut[2] || cut[3] || cut[4] || cut[5]
	return item
}

// truncateOptional is truncateString of *s, in a new string when cut.
func truncateOptional(s *string, limit int) (*string, bool) {
	if s == nil {
		return nil, false
	}
	t, cut := truncateString(*s, limit)
	if !cut {
		return s, false
	}
	return &t, true
}

// truncateParts returns parts with each text and fingerprint cut to
// limit bytes; parts itself is not changed (a copy is made only when
// something is cut).
func truncateParts(parts []api.Part, limit int) ([]api.Part, bool) {
	var out []api.Part
	for i, p := range parts {
		text, cutText := truncateString(p.Text, limit)
		fp, cutFP := truncateOptional(p.Fingerprint, limit)
		if !cutText && !cutFP {
			continue
		}
		if out == nil {
			out = append([]api.Part(nil), parts...)
		}
		out[i].Text, out[i].Fingerprint = text, fp
	}
	if out == nil {
		return parts, false
	}
	return out, true
}

// truncateStrings returns list with each string cut to limit bytes;
// list itself is not changed.
func truncateStrings(list []string, limit int) ([]string, bool) {
	var out []string
	for i, s := range list {
		t, cut := truncateString(s, limit)
		if !cut {
			continue
		}
		if out == nil {
			out = append([]string(nil), list...)
		}
		out[i] = t
	}
	if out == nil {
		return list, false
	}
	return out, true
}

// truncateString cuts s to at most limit bytes at a character boundary.
func truncateString(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	n := limit
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// truncateArgs returns args with every string (at any depth, keys
// included) longer than limit bytes cut at a character boundary within
// limit, and whether anything was cut. args itself is not changed.
func truncateArgs(args map[string]any, limit int) (map[string]any, bool) {
	v, cut := truncateValue(args, limit)
	out, _ := v.(map[string]any)
	return out, cut
}

func truncateValue(v any, limit int) (any, bool) {
	switch v := v.(type) {
	case string:
		return truncateString(v, limit)
	case []any:
		out := make([]any, len(v))
		cut := false
		for i, item := range v {
			var c bool
			out[i], c = truncateValue(item, limit)
			cut = cut || c
		}
		return out, cut
	case map[string]any:
		if v == nil {
			return v, false
		}
		out := make(map[string]any, len(v))
		cut := false
		for k, item := range v {
			tk, ck := truncateValue(k, limit)
			t, c := truncateValue(item, limit)
			out[tk.(string)] = t
			cut = cut || c || ck
		}
		return out, cut
	}
	return v, false
}
