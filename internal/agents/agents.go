// Package agents is the one list of the agents whose hooks the PDP
// answers. The hook endpoint's routes, `pdp hook`'s sub-commands,
// `pdp init` and the API document's enum are all read from it (a test
// holds the API document to it); each agent's package describes itself
// (hookflow.Agent). A fifth agent is one package and one line here.
package agents

import (
	"fmt"
	"strings"

	"github.com/toolperm/pdp/frontends/hooks/claudecode"
	"github.com/toolperm/pdp/frontends/hooks/codex"
	"github.com/toolperm/pdp/frontends/hooks/cursor"
	"github.com/toolperm/pdp/frontends/hooks/geminicli"
	"github.com/toolperm/pdp/frontends/hooks/hookflow"
)

// All are the agents, in the order help and listings show them.
var All = []hookflow.Agent{claudecode.Hook, codex.Hook, geminicli.Hook, cursor.Hook}

// Names are the agents' names, in order.
func Names() []string {
	names := make([]string, len(All))
	for i, a := range All {
		names[i] = a.Name
	}
	return names
}

// Lookup is the agent of that name.
func Lookup(name string) (hookflow.Agent, error) {
	for _, a := range All {
		if a.Name == name {
			return a, nil
		}
	}
	return hookflow.Agent{}, fmt.Errorf("unknown agent %q: one of %s", name, strings.Join(Names(), ", "))
}
