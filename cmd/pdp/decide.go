//go:build !hookonly

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/app"
	"github.com/toolperm/pdp/pdp"
)

// decideBody is a /v1/decide body with an optional inline session.
type decideBody struct {
	api.DecideRequest
	Session *pdp.SessionTree `json:"session,omitempty"`
}

func decideCommand() *cobra.Command {
	var explain, printInput bool
	cmd := &cobra.Command{
		Use:   "decide",
		Short: "Decide one call in-process: a /v1/decide body on stdin, the answer on stdout",
		Long: `Reads one /v1/decide body from stdin, which may carry an inline session:

  {"session_id":"s","tool":"write_file","args":{"path":"/w/a"},
   "session":{"permission_level":"READ_WRITE","workspace":"/w"}}

and prints the decision as JSON. Missing session fields take the defaults
(READ_ONLY, on-demand, LOCAL, the request's cwd as workspace). Exit 0 for
any decision; non-zero with an error on stderr for bad input.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			call, err := readCall(cmd.InOrStdin())
			if err != nil {
				return err
			}
			call.Explain = explain
			engine, err := app.LocalEngine(cmd.Context(), cfg, nil)
			if err != nil {
				return err
			}
			var out any
			if printInput {
				out, err = engine.Input(cmd.Context(), call)
			} else {
				out, err = engine.Decide(cmd.Context(), call)
			}
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		},
	}
	cmd.Flags().String("policies", "", "policy directory, bundle .tar.gz or bundle URL (default: config's policy.path, else the built-in policy)")
	cmd.Flags().BoolVar(&explain, "explain", false, "add the step-by-step trace and the rule each layer matched")
	cmd.Flags().BoolVar(&printInput, "print-input", false, "print the OPA input document instead of deciding")
	return cmd
}

// readCall decodes one body strictly: unknown fields and trailing data
// are errors, so a typo never silently changes a decision.
func readCall(r io.Reader) (pdp.Call, error) {
	raw, err := io.ReadAll(io.LimitReader(r, 16<<20))
	if err != nil {
		return pdp.Call{}, fmt.Errorf("reading stdin: %w", err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return pdp.Call{}, errors.New("stdin is empty: expected a /v1/decide JSON body")
	}
	var body decideBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return pdp.Call{}, fmt.Errorf("invalid JSON body: %w", err)
	}
	if dec.More() {
		return pdp.Call{}, errors.New("invalid JSON body: more than one JSON value on stdin")
	}
	if err := api.DuplicateKeys(raw); err != nil {
		return pdp.Call{}, pdp.Invalid("ambiguous_argument", "%v: which one a tool reads is its own business, so the body is refused", err)
	}
	return pdp.Call{Request: body.DecideRequest, Session: pdp.InlineSession(body.Session, body.Cwd)}, nil
}
