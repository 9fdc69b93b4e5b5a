package mcpproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/toolperm/pdp/api"
)

// rpcKind is what the MCP proxy does with one line from the client.
type rpcKind int

const (
	// rpcPass: not a tool call, relayed as it is.
	rpcPass rpcKind = iota
	// rpcToolCall: a tools/call, decided before the server may see it.
	rpcToolCall
	// rpcBatch: a JSON-RPC batch holding a tool call or a refused
	// message; each element is then handled as a message of its own.
	rpcBatch
	// rpcUnparsable: not one JSON value; answered with a parse error and
	// never relayed, since a lenient server might read it otherwise.
	rpcUnparsable
	// rpcAmbiguous: an object with a key twice (or twice but for case),
	// which servers may read differently; refused, never relayed.
	rpcAmbiguous
)

// rpcMessage is one line from the client as the proxy reads it. Only the
// fields the gate needs are decoded; a relayed line keeps its bytes.
type rpcMessage struct {
	kind   rpcKind
	id     json.RawMessage // nil for a notification
	method string
	params json.RawMessage
	batch  []json.RawMessage
	why    string // for rpcUnparsable and rpcAmbiguous
}

// classifyLine reads one line from the client. Object keys are matched
// the way the most lenient common decoder (Go's encoding/json) matches
// them, case-insensitively, so "Method":"tools/call" is a tool call too.
func classifyLine(line []byte) rpcMessage {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return rpcMessage{kind: rpcPass}
	}
	if trimmed[0] == '[' {
		var elems []json.RawMessage
		if err := decodeOne(trimmed, &elems); err != nil {
			return rpcMessage{kind: rpcUnparsable, why: err.Error()}
		}
		for _, e := range elems {
			// A nested array is no JSON-RPC message; split it too rather
			// than trust a server to refuse it.
			if classifyObject(e).kind != rpcPass || bytes.TrimSpace(e)[0] != '{' {
				return rpcMessage{kind: rpcBatch, batch: elems}
			}
		}
		return rpcMessage{kind: rpcPass, batch: elems}
	}
	return classifyObject(trimmed)
}

// classifyObject reads one message of a line or a batch.
func classifyObject(raw []byte) rpcMessage {
	if err := decodeOne(raw, new(any)); err != nil {
		return rpcMessage{kind: rpcUnparsable, why: err.Error()}
	}
	fields, isObject, err := objectFields(raw)
	if err != nil {
		return rpcMessage{kind: rpcAmbiguous, why: err.Error()}
	}
	if !isObject {
		return rpcMessage{kind: rpcPass} // the server answers what it makes of it
	}
	m := rpcMessage{kind: rpcPass, id: fields["id"], params: fields["params"]}
	if string(m.id) == "null" {
		m.id = nil
	}
	if raw, ok := fields["method"]; ok && json.Unmarshal(raw, &m.method) == nil && strings.EqualFold(m.method, "tools/call") {
		m.kind = rpcToolCall
	}
	return m
}

// decodeOne decodes exactly one JSON value: trailing data (a second
// message on the same line) is an error.
func decodeOne(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("not one JSON value: data after the first")
	}
	return nil
}

// objectFields returns an object's members by folded key; a key that
// repeats (also when equal but for case) is an error.
func objectFields(raw []byte) (map[string]json.RawMessage, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, false, err
	}
	if tok != json.Delim('{') {
		return nil, false, nil
	}
	fields := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, true, err
		}
		key := api.FoldKey(tok.(string))
		if _, dup := fields[key]; dup {
			return nil, true, fmt.Errorf("the key %q appears twice (keys are compared without case)", tok)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, true, err
		}
		fields[key] = v
	}
	return fields, true, nil
}

// toolCall is the part of a tools/call the PDP decides on.
type toolCall struct {
	name string
	args map[string]any
}

// parseToolCall reads a tools/call's params; anything but a tool name
// and an object of arguments is an error (and so a deny).
func parseToolCall(whole []byte, params json.RawMessage) (toolCall, error) {
	if err := api.DuplicateKeys(whole); err != nil {
		return toolCall{}, fmt.Errorf("%w, so the server might read another call than the one decided", err)
	}
	fields, isObject, err := objectFields(params)
	if err != nil || !isObject {
		return toolCall{}, errors.New("tools/call without params")
	}
	var call toolCall
	if err := json.Unmarshal(fields["name"], &call.name); err != nil || call.name == "" {
		return toolCall{}, errors.New("tools/call without a tool name")
	}
	if raw, ok := fields["arguments"]; ok && string(raw) != "null" {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&call.args); err != nil {
			return toolCall{}, errors.New("tools/call arguments are not an object")
		}
	}
	return call, nil
}

// requestIDKey is a JSON-RPC id in one spelling, so 7 and 7.0 or "a"
// and "\u0061" name the same request.
func requestIDKey(id json.RawMessage) string {
	var v any
	if decodeOne(id, &v) != nil {
		return string(id)
	}
	if n, ok := v.(json.Number); ok {
		if f, err := n.Float64(); err == nil {
			return fmt.Sprintf("n:%v", f)
		}
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// cancelledRequest is the requestId of a notifications/cancelled, or nil.
func cancelledRequest(m rpcMessage) json.RawMessage {
	if m.method != "notifications/cancelled" {
		return nil
	}
	fields, _, err := objectFields(m.params)
	if err != nil {
		return nil
	}
	return fields["requestid"]
}

// toolError is a tools/call result the proxy answers itself: the call did
// not run, and the text says why.
func toolError(id json.RawMessage, text string) []byte {
	out, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": true},
	})
	return append(out, '\n')
}

// rpcError is a JSON-RPC error answer (a nil id is sent as null).
func rpcError(id json.RawMessage, code int, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
	return append(out, '\n')
}
