package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/app"
	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/pdp"
)

// writeInputs prints, for the stream's bodies 0 … n-1, the input document
// the built-in policy judges (what `pdp decide --print-input` prints,
// with the defaults `pdp serve` gives a session created by its first
// decision and the path resolution it wires) as {"input": …}, one a line.
func writeInputs(ctx context.Context, w io.Writer, s stream, n, clients int) error {
	engine, err := inputEngine(ctx)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(w)
	for i := 0; i < n; i++ {
		doc, err := inputOf(ctx, engine, s.body(i, clients))
		if err != nil {
			return fmt.Errorf("body %d: %w", i, err)
		}
		line, err := json.Marshal(map[string]any{"input": doc})
		if err != nil {
			return err
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	return out.Flush()
}

// inputEngine is an engine on the built-in policy with the adapters
// `pdp serve` wires by default.
func inputEngine(ctx context.Context) (*pdp.Engine, error) {
	cfg := config.Default()
	cfg.Policy.Path = "" // the built-in policy
	return app.LocalEngine(ctx, cfg, nil)
}

// inputOf is the input document of one /v1/decide body in a session with
// the defaults, whose workspace is the body's cwd.
func inputOf(ctx context.Context, engine *pdp.Engine, body string) (map[string]any, error) {
	var req api.DecideRequest
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, err
	}
	return engine.Input(ctx, pdp.Call{Request: req, Session: pdp.InlineSession(nil, req.Cwd)})
}
