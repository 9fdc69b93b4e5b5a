package main

import (
	"fmt"
	"net/http"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/client"
)

// caFileFlag adds --ca-file to a command that talks to the PDP (default
// $PDP_CA_FILE) and checks, before the command runs, that the file holds
// a certificate.
func caFileFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVar(dst, "ca-file", envOr("PDP_CA_FILE", ""), "PEM CA certificates to trust, and only those, for an https:// --url (env PDP_CA_FILE)")
	check := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if *dst != "" {
			if _, err := client.NewTransport(*dst); err != nil {
				return fmt.Errorf("--ca-file: %w", err)
			}
		}
		if check != nil {
			return check(cmd, args)
		}
		return nil
	}
}

// caFileOf is the --ca-file of cmd.
func caFileOf(cmd *cobra.Command) string {
	f, _ := cmd.Flags().GetString("ca-file")
	return f
}

// pdpTransport is the transport of the PDP's commands: trusting caFile
// when set. A file that cannot be read (it was checked when the command
// started) fails every request, so no decision is taken without it.
func pdpTransport(caFile string) http.RoundTripper {
	t, err := client.NewTransport(caFile)
	if err != nil {
		return failingTransport{err}
	}
	return t
}

type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, f.err
}
