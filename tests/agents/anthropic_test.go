package agents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// toolCall is one call the scripted model asks for.
type toolCall struct {
	Name  string
	Input map[string]any
}

// messagesAPI is a scripted model behind the Anthropic Messages API
// (POST /v1/messages, streamed or not): to a request that offers tools it
// answers with the next call of its script — one per turn, the turn
// after the tool_result of the one before — and then with text; to any
// other request (a title, a summary) with text. It keeps every request.
type messagesAPI struct {
	t      *testing.T
	script []toolCall

	mu       sync.Mutex
	requests []messagesRequest
	other    []string // paths it does not serve
}

// messagesRequest is what it reads of a request.
type messagesRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// contentBlock is a block of a message's content.
type contentBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	Text      string          `json:"text,omitempty"`
}

func newMessagesAPI(t *testing.T, script []toolCall) (*messagesAPI, string) {
	m := &messagesAPI{t: t, script: script}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv.URL
}

func (m *messagesAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		_, _ = w.Write([]byte(`{"input_tokens":100}`))
		return
	default:
		m.mu.Lock()
		m.other = append(m.other, r.Method+" "+r.URL.Path)
		m.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	var req messagesRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()

	var block map[string]any
	stop := "end_turn"
	if step := toolResults(req); len(req.Tools) > 0 && step < len(m.script) {
		call := m.script[step]
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%02d", step+1), "name": call.Name, "input": call.Input}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": "Done."}
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "msg_scripted", "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]int{"input_tokens": 100, "output_tokens": 10},
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(event string, data any) {
		raw, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, raw)
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_scripted", "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 100, "output_tokens": 1},
	}})
	if block["type"] == "tool_use" {
		input, _ := json.Marshal(block["input"])
		send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{
			"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{
			"type": "input_json_delta", "partial_json": string(input)}})
	} else {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": block["text"]}})
	}
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 10}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// toolResults counts the tool_result blocks of a request's messages: the
// calls of the script answered so far.
func toolResults(req messagesRequest) int {
	n := 0
	for _, msg := range req.Messages {
		for _, b := range blocks(msg.Content) {
			if b.Type == "tool_result" {
				n++
			}
		}
	}
	return n
}

// blocks reads a message's content: a string or a list of blocks.
func blocks(raw json.RawMessage) []contentBlock {
	var list []contentBlock
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []contentBlock{{Type: "text", Text: text}}
	}
	return nil
}

// results returns what the CLI sent back for each tool_use id: the
// tool_result's text, and whether it was marked an error.
func (m *messagesAPI) results() map[string]contentBlock {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]contentBlock{}
	for _, req := range m.requests {
		for _, msg := range req.Messages {
			for _, b := range blocks(msg.Content) {
				if b.Type == "tool_result" {
					out[b.ToolUseID] = b
				}
			}
		}
	}
	return out
}

// offeredTools is every tool name the CLI offered the model.
func (m *messagesAPI) offeredTools() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	var names []string
	for _, req := range m.requests {
		for _, tool := range req.Tools {
			if !seen[tool.Name] {
				seen[tool.Name] = true
				names = append(names, tool.Name)
			}
		}
	}
	return names
}

// resultText flattens a tool_result's content (a string or text blocks).
func resultText(b contentBlock) string {
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var out strings.Builder
	for _, c := range blocks(b.Content) {
		out.WriteString(c.Text)
	}
	return out.String()
}
