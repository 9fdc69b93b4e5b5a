package httpapi

import (
	"unicode/utf8"

	"github.com/toolperm/pdp/api"
)

// listDecision is rec as a list shows it: every argument string, and the
// fingerprint, cwd and reason (which repeat parts of the call), cut to
// limit bytes.
func listDecision(rec api.Event, limit int) api.ListedEvent {
	item := api.ListedEvent{Event: rec}
	var cut [4]bool
	item.Args, cut[0] = truncateArgs(rec.Args, limit)
	item.Cwd, cut[1] = truncateString(rec.Cwd, limit)
	item.Reason, cut[2] = truncateString(rec.Reason, limit)
	if rec.Fingerprint != nil {
		var fp string
		fp, cut[3] = truncateString(*rec.Fingerprint, limit)
		item.Fingerprint = &fp
	}
	item.Truncated = cut[0] || cut[1] || cut[2] || cut[3]
	return item
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
