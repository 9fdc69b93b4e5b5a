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

// generateContentAPI is a scripted model behind the Gemini API as Gemini
// CLI speaks it (POST /v1beta/models/{model}:streamGenerateContent?alt=sse,
// and :generateContent): to a request that offers tools it answers with
// the next functionCall of its script — one per turn, the turn after
// the functionResponse of the one before — and then with text. It keeps
// every request.
type generateContentAPI struct {
	script []toolCall

	mu       sync.Mutex
	requests []generateContentRequest
	other    []string
}

// generateContentRequest is what it reads of a request.
type generateContentRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			FunctionResponse *struct {
				Name     string         `json:"name"`
				Response map[string]any `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

func newGenerateContentAPI(t *testing.T, script []toolCall) (*generateContentAPI, string) {
	m := &generateContentAPI{script: script}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv.URL
}

func (m *generateContentAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	stream := strings.HasSuffix(path, ":streamGenerateContent")
	switch {
	case r.Method != http.MethodPost || !strings.HasPrefix(path, "/v1beta/models/"):
	case strings.HasSuffix(path, ":countTokens"):
		_, _ = w.Write([]byte(`{"totalTokens":100}`))
		return
	case stream || strings.HasSuffix(path, ":generateContent"):
		m.generate(w, r, stream)
		return
	}
	m.mu.Lock()
	m.other = append(m.other, r.Method+" "+r.URL.String())
	m.mu.Unlock()
	http.NotFound(w, r)
}

func (m *generateContentAPI) generate(w http.ResponseWriter, r *http.Request, stream bool) {
	var req generateContentRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()
	part := map[string]any{"text": "Done."}
	if step := len(functionResponses(req)); len(req.Tools) > 0 && step < len(m.script) {
		call := m.script[step]
		part = map[string]any{"functionCall": map[string]any{"name": call.Name, "args": call.Input}}
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]int{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  "scripted",
	}
	raw, _ := json.Marshal(resp)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(raw)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\r\n\r\n", raw)
}

// functionResponses returns the functionResponse parts of a request, in
// order, as JSON: what the CLI sent back for each call.
func functionResponses(req generateContentRequest) []string {
	var out []string
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				raw, _ := json.Marshal(p.FunctionResponse.Response)
				out = append(out, string(raw))
			}
		}
	}
	return out
}

// responses is what the CLI sent back for each call, from its last
// request with tools.
func (m *generateContentAPI) responses() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.requests) - 1; i >= 0; i-- {
		if len(m.requests[i].Tools) > 0 {
			return functionResponses(m.requests[i])
		}
	}
	return nil
}

// offeredTools is every function the CLI declared to the model.
func (m *generateContentAPI) offeredTools() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	var names []string
	for _, req := range m.requests {
		for _, tool := range req.Tools {
			for _, f := range tool.FunctionDeclarations {
				if !seen[f.Name] {
					seen[f.Name] = true
					names = append(names, f.Name)
				}
			}
		}
	}
	return names
}
