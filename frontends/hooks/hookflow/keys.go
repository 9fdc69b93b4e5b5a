package hookflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/toolperm/pdp/api"
)

// CheckKeys refuses an event that the agent and the PDP could read as two
// different events. An agent reads each member of its event by its exact
// key, while encoding/json, which the adapters decode with, takes a key
// in any case (under Unicode simple case folding) and keeps the last of
// two that fold together: "Tool_Input" beside "tool_input" would have
// the PDP judge another command than the agent runs, "Tool_Name" another
// tool, "Hook_Event_Name" another event (or none). So an event is
// refused, never decided, when
//
//   - two of its top-level keys fold together, or one appears twice;
//   - the same holds anywhere inside a member the adapter reads (the
//     objects nested in tool_input too), api.DuplicateKeys' check; or
//   - a top-level key is a member the adapter reads in another case,
//     which the PDP would read and the agent would not (the same check
//     as ParseDecision's of the PDP's answer).
//
// event is the adapter's Event struct: the members its json tags name are
// those the adapter reads. Members it does not read (a tool's response
// after the call) are compared at the top level only. Text that is not a
// JSON object is left to the adapter, which says what is wrong with it.
//
// agentEvent is the event's name as the agent reads it, the exact key
// hook_event_name, so that a refused event is answered in the shape of
// the event the agent sent.
func CheckKeys(raw []byte, event any) (agentEvent string, err error) {
	read := jsonNames(reflect.TypeOf(event))
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", nil
	}
	// The event with the members the adapter does not read as null, for
	// api.DuplicateKeys.
	var judged bytes.Buffer
	judged.WriteByte('{')
	var variant error
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", nil
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", nil
		}
		if key == "hook_event_name" {
			var name string
			if json.Unmarshal(v, &name) == nil {
				agentEvent = name
			}
		}
		if judged.Len() > 1 {
			judged.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		judged.Write(k)
		judged.WriteByte(':')
		if read[key] {
			judged.Write(v)
		} else {
			judged.WriteString("null")
		}
		if variant == nil {
			variant = otherCase(key, read)
		}
	}
	if _, err := dec.Token(); err != nil {
		return "", nil
	}
	judged.WriteByte('}')
	if err := api.DuplicateKeys(judged.Bytes()); err != nil {
		return agentEvent, Ambiguous(err)
	}
	if variant != nil {
		return agentEvent, Ambiguous(variant)
	}
	return agentEvent, nil
}

// Ambiguous is the error of an event whose keys the agent and the PDP
// could read differently.
func Ambiguous(err error) error {
	return fmt.Errorf("the hook event is ambiguous: %w; the agent reads each key exactly, so the PDP could judge another call than the one it makes", err)
}

// jsonNames are the member names of a struct's json tags.
func jsonNames(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return names
	}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names[name] = true
		}
	}
	return names
}
