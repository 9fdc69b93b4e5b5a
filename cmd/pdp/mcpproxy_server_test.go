package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// testMCPServerArg, as the test binary's first argument, makes it a small
// MCP server over stdio (see runTestMCPServer): the real server process
// behind a real `pdp mcp-proxy` in the tests.
const testMCPServerArg = "toolperm-test-mcp-server"

func init() {
	if len(os.Args) == 3 && os.Args[1] == testMCPServerArg {
		os.Exit(runTestMCPServer(os.Args[2]))
	}
}

// runTestMCPServer is an MCP server that appends every line it receives
// to the file record, exactly as received. It answers initialize, ping,
// tools/list and tools/call (each call in its own goroutine, after
// arguments.sleep_ms; with a progress token it first sends a progress
// notification); after notifications/initialized it asks the client
// roots/list. When stdin ends it finishes the calls under way and exits.
func runTestMCPServer(record string) int {
	rec, err := os.OpenFile(record, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer rec.Close()
	var outMu sync.Mutex
	send := func(v any) {
		raw, _ := json.Marshal(v)
		outMu.Lock()
		defer outMu.Unlock()
		_, _ = os.Stdout.Write(append(raw, '\n'))
	}
	reply := func(id json.RawMessage, result any) {
		send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	var calls sync.WaitGroup
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			if _, err := rec.Write(line); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Name      string         `json:"name"`
					Arguments map[string]any `json:"arguments"`
					Meta      struct {
						ProgressToken any `json:"progressToken"`
					} `json:"_meta"`
				} `json:"params"`
			}
			_ = json.Unmarshal(line, &m)
			switch m.Method {
			case "initialize":
				reply(m.ID, map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
					"serverInfo": map[string]any{"name": "toolperm-test", "version": "1"}})
			case "ping":
				reply(m.ID, map[string]any{})
			case "notifications/initialized":
				send(map[string]any{"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"})
			case "tools/list":
				reply(m.ID, map[string]any{"tools": []any{
					map[string]any{"name": "read", "inputSchema": map[string]any{"type": "object"}},
					map[string]any{"name": "write", "inputSchema": map[string]any{"type": "object"}},
					map[string]any{"name": "delete", "inputSchema": map[string]any{"type": "object"}},
				}})
			case "tools/call":
				calls.Add(1)
				go func() {
					defer calls.Done()
					if ms, ok := m.Params.Arguments["sleep_ms"].(float64); ok {
						time.Sleep(time.Duration(ms) * time.Millisecond)
					}
					if tok := m.Params.Meta.ProgressToken; tok != nil {
						send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": tok, "progress": 1, "total": 1}})
					}
					reply(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "ran " + m.Params.Name}}})
				}()
			}
		}
		if err != nil {
			break
		}
	}
	calls.Wait()
	return 0
}
