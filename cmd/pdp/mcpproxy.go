//go:build !hookonly

package main

import (
	"errors"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/frontends/mcpproxy"
)

func mcpProxyCommand() *cobra.Command {
	var f mcpproxy.Config
	var url, token string
	cmd := &cobra.Command{
		Use:   "mcp-proxy --session ID --name SERVER [flags] -- CMD [ARGS...]",
		Short: "Run an MCP server over stdio and ask the PDP before every tool call",
		Long: `Runs the MCP server CMD over stdio and sits between it and the MCP client
(this process's stdin and stdout). Every tools/call is decided by the PDP
at --url as the tool mcp__SERVER__<tool> with the call's arguments, the
session --session and the workspace as cwd, so the rules mcp.SERVER.<tool>
and mcp.SERVER.*, the dangerous list (an MCP tool without a rule is
denied) and path confinement apply:

  allow  the call is relayed to the server
  deny   the client gets a tool result with isError: true and the reason;
         the server never sees the call
  ask    the call waits up to --wait for a person's answer (the PDP's
         inbox, pdp answer); allowed, it is relayed; denied or not
         answered, it is refused as a deny

A decision that cannot be had (the PDP unreachable, an error answer) is a
deny. Everything else — initialize, lists, notifications, progress,
cancellation, the server's own requests and their answers — is relayed
byte for byte, in order. A tool call waiting for its decision holds up
nothing else; a notifications/cancelled for it drops it. When the client
closes stdin, the decisions under way finish, the server's stdin is
closed and its output is relayed until it exits, so every request sent
gets its answer. The exit status is the server's.

An existing session with the same id is used as it is, its workspace the
calls' cwd (create it first, with a person's token, to give it rules: a
dispatcher token may add deny rules only); a --workspace that differs from
it is refused at start. Otherwise the session is created with --workspace
(default: the working directory) as its workspace. The session is looked
at before the server starts; a PDP that is not up yet is asked again on
the first tool call.

The relay is plain newline-delimited JSON-RPC, not an MCP SDK: only
tools/call is read, so messages the proxy does not gate reach the other
side exactly as sent, whatever protocol version the two speak. Lines that
are not one JSON value, and objects with a key twice (compared without
case, as some decoders match keys), are refused with a JSON-RPC error
rather than relayed: a lenient server could read them as another call
than the one decided. A batch holding a tool call is split into single
messages.

  pdp mcp-proxy --session desktop --name filesystem --workspace ~/proj -- \
    npx -y @modelcontextprotocol/server-filesystem ~/proj`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return errors.New("put the MCP server's command after --: pdp mcp-proxy [flags] -- CMD [ARGS...]")
			}
			if token == "" {
				token = os.Getenv("PDP_TOKEN")
			}
			// No client-side timeout: contexts bound every request, and an
			// ask's wait is longer than any fixed timeout.
			httpClient := &http.Client{Transport: completeDecisions{pdpTransport(caFileOf(cmd))}}
			f.PDP = client.New(url, client.WithToken(token), client.WithHTTPClient(httpClient))
			return mcpproxy.Run(cmd.Context(), f, args, mcpproxy.Stdio{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), Log: cmd.ErrOrStderr()})
		},
	}
	cmd.Flags().StringVar(&url, "url", "http://127.0.0.1:8181", "the PDP's base URL")
	cmd.Flags().StringVar(&token, "token", "", "dispatcher token (default: $PDP_TOKEN)")
	cmd.Flags().StringVar(&f.Session, "session", "", "the PDP session the calls are decided in (required)")
	cmd.Flags().StringVar(&f.Name, "name", "", "the server's name in capabilities: mcp.NAME.<tool> (required; [a-z0-9_-], no __)")
	cmd.Flags().StringVar(&f.Workspace, "workspace", "", "the directory calls must stay in (default: the existing session's workspace, else the working directory)")
	cmd.Flags().DurationVar(&f.Wait, "wait", 30*time.Second, "how long an ask waits for a person's answer (0: an ask is refused at once)")
	cmd.Flags().DurationVar(&f.Timeout, "timeout", 10*time.Second, "how long a decision may take before the call is refused")
	caFileFlag(cmd, new(string))
	_ = cmd.MarkFlagRequired("session")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}
