package hookflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/toolperm/pdp/client"
)

// decisionFields are the fields every answer of POST /v1/decide carries
// (docs/design.md §4).
var decisionFields = []string{"decision_id", "decision", "need_approval", "source", "rule", "reason", "capability", "fingerprint", "grantable", "danger", "revision"}

// ParseDecision reads the PDP's answer to a decide request and accepts
// only a complete one: every field of the answer present with its JSON
// type, a decision of allow, ask or deny, need_approval true exactly for
// ask, a decision id, and nothing after the object. A server that answers
// anything less is not one the hook can act on, so the call is denied.
// Unknown fields are ignored (the API may grow), but one that differs
// from a known field only in case is refused: decoders disagree on which
// of the two counts.
func ParseDecision(raw []byte) (client.Decision, error) {
	d, err := parseDecision(raw)
	if err != nil {
		return client.Decision{}, fmt.Errorf("the PDP's answer is not a complete decision: %w", err)
	}
	return d, nil
}

func parseDecision(raw []byte) (client.Decision, error) {
	var d client.Decision
	f, err := objectFields(raw)
	if err != nil {
		return d, err
	}
	known := make(map[string]bool, len(decisionFields))
	for _, name := range decisionFields {
		known[name] = true
	}
	for name := range f {
		if err := otherCase(name, known); err != nil {
			return d, err
		}
	}
	for _, name := range decisionFields {
		if _, ok := f[name]; !ok {
			return d, fmt.Errorf("field %q is missing", name)
		}
	}
	errs := []error{
		f.str("decision_id", &d.DecisionID),
		f.str("decision", &d.Decision),
		f.boolean("need_approval", &d.NeedApproval),
		f.str("source", &d.Source),
		f.str("rule", &d.Rule),
		f.str("reason", &d.Reason),
		f.optStr("capability", &d.Capability),
		f.optStr("fingerprint", &d.Fingerprint),
		f.boolean("grantable", &d.Grantable),
		f.danger(&d.Danger),
		f.str("revision", &d.Revision),
	}
	if err := errors.Join(errs...); err != nil {
		return d, err
	}
	switch {
	case d.DecisionID == "":
		return d, errors.New("decision_id is empty")
	case d.Decision != client.Allow && d.Decision != client.Ask && d.Decision != client.Deny:
		return d, fmt.Errorf("decision %q is not allow, ask or deny", d.Decision)
	case d.NeedApproval != (d.Decision == client.Ask):
		return d, fmt.Errorf("need_approval is %t for decision %q", d.NeedApproval, d.Decision)
	}
	return d, nil
}

// otherCase reports a name that differs from a known one only in case:
// decoders disagree on which of the two counts.
func otherCase(name string, known map[string]bool) error {
	if known[name] {
		return nil
	}
	for k := range known {
		if strings.EqualFold(name, k) {
			return fmt.Errorf("field %q is %q in another case", name, k)
		}
	}
	return nil
}

// fields are the members of one JSON object, undecoded.
type fields map[string]json.RawMessage

// objectFields splits one JSON object into its members; a member that
// appears twice, or anything after the object, is an error.
func objectFields(raw []byte) (fields, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("it is not a JSON object")
	}
	f := fields{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("it is not JSON: %w", err)
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("it is not JSON: %w", err)
		}
		if _, dup := f[name]; dup {
			return nil, fmt.Errorf("field %q appears twice", name)
		}
		f[name] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("it is not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("there is more after the object")
	}
	return f, nil
}

// kind is the JSON type of a member by its first byte.
func (f fields) kind(name string) byte {
	if v := bytes.TrimSpace(f[name]); len(v) > 0 {
		return v[0]
	}
	return 0
}

func (f fields) str(name string, out *string) error {
	if f.kind(name) != '"' {
		return fmt.Errorf("%s is not a string", name)
	}
	return json.Unmarshal(f[name], out)
}

func (f fields) optStr(name string, out **string) error {
	if f.kind(name) == 'n' {
		return nil
	}
	var s string
	if err := f.str(name, &s); err != nil {
		return fmt.Errorf("%s is neither a string nor null", name)
	}
	*out = &s
	return nil
}

func (f fields) boolean(name string, out *bool) error {
	if k := f.kind(name); k != 't' && k != 'f' {
		return fmt.Errorf("%s is not a boolean", name)
	}
	return json.Unmarshal(f[name], out)
}

// danger is null or {"verdict": string, "by": string}.
func (f fields) danger(out **client.Danger) error {
	switch f.kind("danger") {
	case 'n':
		return nil
	case '{':
	default:
		return errors.New("danger is neither an object nor null")
	}
	inner, err := objectFields(f["danger"])
	if err != nil {
		return fmt.Errorf("danger: %w", err)
	}
	var d client.Danger
	if err := errors.Join(inner.str("verdict", &d.Verdict), inner.str("by", &d.By)); err != nil {
		return fmt.Errorf("danger: %w", err)
	}
	*out = &d
	return nil
}
