package agents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// responsesAPI is a scripted model behind OpenAI's Responses API (POST
// /v1/responses, streamed), as Codex speaks it to a custom model
// provider: to a request that offers tools it answers with the next
// function call of its script — one per turn, the turn after the
// function_call_output of the one before — and then with a message. It
// keeps every request.
type responsesAPI struct {
	script []toolCall

	mu       sync.Mutex
	requests []responsesRequest
	other    []string
}

// responsesRequest is what it reads of a request.
type responsesRequest struct {
	Model string            `json:"model"`
	Input []json.RawMessage `json:"input"`
	Tools []responsesTool   `json:"tools"`
}

// responsesTool is an offered tool; a namespace holds more.
type responsesTool struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Tools []responsesTool `json:"tools"`
}

// responsesItem is an item of a request's input.
type responsesItem struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output any    `json:"output"`
}

func newResponsesAPI(t *testing.T, script []toolCall) (*responsesAPI, string) {
	m := &responsesAPI{script: script}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv.URL
}

func (m *responsesAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		m.mu.Lock()
		m.other = append(m.other, r.Method+" "+r.URL.Path)
		m.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	var req responsesRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()

	var item map[string]any
	if step := len(outputsOf(req)); len(req.Tools) > 0 && step < len(m.script) {
		call := m.script[step]
		args, _ := json.Marshal(call.Input)
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%02d", step+1), "call_id": fmt.Sprintf("call_%02d", step+1),
			"name": call.Name, "arguments": string(args), "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": "msg_scripted", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "Done.", "annotations": []any{}}}}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(data map[string]any) {
		raw, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], raw)
	}
	send(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_scripted", "status": "in_progress"}})
	send(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	send(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	send(map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_scripted", "status": "completed",
		"usage": map[string]any{"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}}})
}

// outputsOf returns the function_call_output items of a request, by
// call id: what the CLI sent back for each call.
func outputsOf(req responsesRequest) map[string]string {
	out := map[string]string{}
	for _, raw := range req.Input {
		var it responsesItem
		if json.Unmarshal(raw, &it) != nil || it.Type != "function_call_output" {
			continue
		}
		switch o := it.Output.(type) {
		case string:
			out[it.CallID] = o
		default:
			b, _ := json.Marshal(o)
			out[it.CallID] = string(b)
		}
	}
	return out
}

// outputs is what the CLI sent back for each call, from its last request.
func (m *responsesAPI) outputs() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.requests) == 0 {
		return nil
	}
	return outputsOf(m.requests[len(m.requests)-1])
}

// offeredTools is every tool the CLI offered the model: functions and
// custom tools by name (a namespace's by theirs), built-in tools (such
// as web_search) by type.
func (m *responsesAPI) offeredTools() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	var names []string
	var walk func([]responsesTool)
	walk = func(tools []responsesTool) {
		for _, tool := range tools {
			if tool.Type == "namespace" {
				walk(tool.Tools)
				continue
			}
			name := tool.Name
			if name == "" {
				name = tool.Type
			}
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	for _, req := range m.requests {
		walk(req.Tools)
	}
	return names
}
