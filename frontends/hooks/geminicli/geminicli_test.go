package geminicli_test

import (
	"testing"

	"github.com/toolperm/pdp/frontends/hooks/geminicli"
	"github.com/toolperm/pdp/frontends/hooks/hookflow/hookflowtest"
)

var adapter = hookflowtest.Adapter{Parse: geminicli.Parse, Reply: geminicli.Reply}

// The events in testdata are Gemini CLI's BeforeTool and AfterTool
// payloads: the base input and the tool fields of docs/hooks/reference.md
// and BeforeToolInput/McpToolContext in packages/core/src/hooks/types.ts
// of google-gemini/gemini-cli; tool names and arguments from
// packages/core/src/tools/definitions/base-declarations.ts.
func TestGolden(t *testing.T) { hookflowtest.Run(t, "testdata", adapter) }

func TestMalformedEvents(t *testing.T) {
	hookflowtest.Refuses(t, adapter, map[string]struct{ Event, Says string }{
		"not JSON":      {`[`, "not JSON"},
		"another event": {`{"session_id":"s","hook_event_name":"BeforeModel","tool_name":"x"}`, `"BeforeModel" is not one`},
		"no tool":       {`{"session_id":"s","hook_event_name":"BeforeTool"}`, "names no tool"},
		"no session":    {`{"hook_event_name":"BeforeTool","tool_name":"read_file"}`, "no session_id"},
	})
}
