package mcpproxy

import "testing"

func TestClassifyLine(t *testing.T) {
	cases := map[string]struct {
		line string
		want rpcKind
	}{
		"a request":                      {`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, rpcPass},
		"a notification":                 {`{"jsonrpc":"2.0","method":"notifications/initialized"}`, rpcPass},
		"a response":                     {`{"jsonrpc":"2.0","id":"s1","result":{}}`, rpcPass},
		"an empty line":                  {"  \r\n", rpcPass},
		"a tool call":                    {`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, rpcToolCall},
		"an escaped method":              {`{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`, rpcToolCall},
		"a method in upper case":         {`{"jsonrpc":"2.0","id":1,"method":"TOOLS/CALL"}`, rpcToolCall},
		"a method key in upper case":     {`{"jsonrpc":"2.0","id":1,"METHOD":"tools/call"}`, rpcToolCall},
		"a method key with a Kelvin K":   {`{"jsonrpc":"2.0","id":1,"method":"x","params":{},"\u212aey":1,"key":2}`, rpcAmbiguous},
		"a method twice":                 {`{"method":"tools/call","method":"ping"}`, rpcAmbiguous},
		"a params key with a long s":     {`{"id":1,"method":"tools/call","params":{},"param\u017f":{}}`, rpcAmbiguous},
		"a method twice but for case":    {`{"method":"ping","Method":"tools/call"}`, rpcAmbiguous},
		"two messages on a line":         {`{"method":"ping"} {"method":"tools/call"}`, rpcUnparsable},
		"NaN":                            {`{"method":"tools/call","params":{"arguments":{"n":NaN}}}`, rpcUnparsable},
		"half a message":                 {`{"method":"tools/call",`, rpcUnparsable},
		"a batch without tool calls":     {`[{"id":1,"method":"ping"},{"method":"notifications/initialized"}]`, rpcPass},
		"a batch with a tool call":       {`[{"id":1,"method":"ping"},{"id":2,"method":"tools/call"}]`, rpcBatch},
		"a batch with an ambiguous item": {`[{"method":"ping","METHOD":"x"}]`, rpcBatch},
		"a nested batch":                 {`[[{"id":2,"method":"tools/call"}]]`, rpcBatch},
		"a number":                       {`7`, rpcPass},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := classifyLine([]byte(tc.line)).kind; got != tc.want {
				t.Fatalf("%d, want %d", got, tc.want)
			}
		})
	}
}

func TestParseToolCall(t *testing.T) {
	cases := map[string]struct {
		line string
		ok   bool
	}{
		"name and arguments":          {`{"id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"/w/a"}}}`, true},
		"no arguments":                {`{"id":1,"method":"tools/call","params":{"name":"read"}}`, true},
		"no params":                   {`{"id":1,"method":"tools/call"}`, false},
		"no name":                     {`{"id":1,"method":"tools/call","params":{"arguments":{}}}`, false},
		"a name that is no string":    {`{"id":1,"method":"tools/call","params":{"name":7}}`, false},
		"arguments that are a list":   {`{"id":1,"method":"tools/call","params":{"name":"read","arguments":["/etc/shadow"]}}`, false},
		"an argument twice":           {`{"id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"/etc/shadow","path":"/w/a"}}}`, false},
		"an argument twice but case":  {`{"id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"/w/a","PATH":"/etc/shadow"}}}`, false},
		"a deep key twice":            {`{"id":1,"method":"tools/call","params":{"name":"read","arguments":{"o":[{"a":1,"a":2}]}}}`, false},
		"a name key twice":            {`{"id":1,"method":"tools/call","params":{"name":"read","Name":"delete"}}`, false},
		"an argument with a long s":   {`{"id":1,"method":"tools/call","params":{"name":"read","arguments":{"source":"/w/a","\u017fource":"/etc/shadow"}}}`, false},
		"a Kelvin sign deep down":     {`{"id":1,"method":"tools/call","params":{"name":"read","arguments":{"o":[{"key":1,"\u212aey":2}]}}}`, false},
		"the same key in two objects": {`{"id":1,"method":"tools/call","params":{"name":"read","arguments":{"a":{"name":1},"b":{"name":2}}}}`, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := classifyLine([]byte(tc.line))
			if m.kind != rpcToolCall {
				t.Fatalf("kind %d", m.kind)
			}
			_, err := parseToolCall([]byte(tc.line), m.params)
			if (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
