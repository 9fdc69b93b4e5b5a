package decisionlog

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/toolperm/pdp/pdp"
)

// Path is the decision's entry point in OPA's notation: the package path
// of the rule that answers, "/"-separated, without "data".
var Path = strings.ReplaceAll(strings.TrimPrefix(pdp.AnswerPoint, "data."), ".", "/")

// BundleName names the policy in an event's bundles.
const BundleName = "toolperm"

// TimeFormat is RFC 3339 with all nine digits of the nanoseconds, so
// every timestamp has the same shape for parsers that want one.
const TimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// Masked replaces the value of every masked argument key.
const Masked = "***"

// Event is one decision in OPA's decision-log event format (the fields of
// OPA's plugins/logs EventV1 that a toolperm decision has).
type Event struct {
	Labels     map[string]string     `json:"labels"`
	DecisionID string                `json:"decision_id"`
	Bundles    map[string]BundleInfo `json:"bundles,omitempty"`
	Path       string                `json:"path"`
	Input      Input                 `json:"input"`
	Result     json.RawMessage       `json:"result"`
	Masked     []string              `json:"masked,omitempty"`
	Timestamp  string                `json:"timestamp"`
	Metrics    map[string]int64      `json:"metrics"`
}

// BundleInfo is the revision of the policy that decided.
type BundleInfo struct {
	Revision string `json:"revision"`
}

// Input is the request that was decided, its masked argument values
// replaced; its fields are those of the request in the API.
type Input struct {
	SessionID  string         `json:"session_id"`
	Tool       string         `json:"tool,omitempty"`
	Capability string         `json:"capability,omitempty"`
	Args       map[string]any `json:"args,omitempty"`
	Cwd        string         `json:"cwd,omitempty"`
}

// mask is the set of argument keys whose values are not exported, in
// lower case: keys match whatever their case.
type mask map[string]struct{}

func newMask(keys []string) mask {
	m := mask{}
	for _, k := range keys {
		if k = strings.TrimSpace(k); k != "" {
			m[strings.ToLower(k)] = struct{}{}
		}
	}
	return m
}

func (m mask) has(key string) bool {
	_, ok := m[strings.ToLower(key)]
	return ok
}

// newEvent builds the event of ev; labels are shared, never modified.
func newEvent(ev pdp.AuditRecord, labels map[string]string, m mask) (Event, error) {
	result, err := json.Marshal(ev.Decision)
	if err != nil {
		return Event{}, fmt.Errorf("encoding decision %s: %w", ev.Decision.DecisionID, err)
	}
	session := ev.Request.SessionID
	if session == "" {
		session = ev.SessionID
	}
	e := Event{
		Labels:     labels,
		DecisionID: ev.Decision.DecisionID,
		Path:       Path,
		Input:      Input{SessionID: session, Tool: ev.Request.Tool, Capability: ev.Request.Capability, Cwd: ev.Request.Cwd},
		Result:     result,
		Timestamp:  ev.Time.UTC().Format(TimeFormat),
		Metrics:    map[string]int64{"timer_server_handler_ns": ev.Latency.Nanoseconds()},
	}
	if ev.Decision.Revision != "" {
		e.Bundles = map[string]BundleInfo{BundleName: {Revision: ev.Decision.Revision}}
	}
	if ev.Request.Args != nil {
		args, err := maskedCopy(ev.Request.Args, m, "/input/args", &e.Masked)
		if err != nil {
			return Event{}, fmt.Errorf("encoding the arguments of decision %s: %w", ev.Decision.DecisionID, err)
		}
		e.Input.Args = args.(map[string]any)
		sort.Strings(e.Masked)
	}
	return e, nil
}

// maskedCopy copies v, replacing the value of every masked key at any
// depth, and appends the JSON pointer of each to masked. The request's
// arguments are never modified: the trail and the answer share them.
func maskedCopy(v any, m mask, at string, masked *[]string) (any, error) {
	switch v := v.(type) {
	case nil, string, bool, float64, json.Number:
		return v, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			p := at + "/" + pointerToken(k)
			if m.has(k) {
				out[k] = Masked
				*masked = append(*masked, p)
				continue
			}
			c, err := maskedCopy(x, m, p, masked)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			c, err := maskedCopy(x, m, fmt.Sprintf("%s/%d", at, i), masked)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	// Anything else (a typed map or slice built in Go, a number type):
	// see it as its JSON, so a key in it is masked all the same.
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	return maskedCopy(generic, m, at, masked)
}

// pointerToken escapes a key for a JSON pointer (RFC 6901).
func pointerToken(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// MasksKey says whether the mask keys (decision_log.mask) hide the
// value of the argument key: matched whatever its case, as a line's
// arguments are masked.
func MasksKey(keys []string, key string) bool { return newMask(keys).has(key) }
