package hookflow

import (
	"fmt"

	"github.com/toolperm/pdp/api"
)

// windowsPaths says why a call from an agent on Windows is denied: its
// cwd or workspace is a Windows path, which the PDP cannot confine yet
// (it would read C:\proj as a relative POSIX path). "" when neither is.
// The server refuses the call's Windows path arguments too (adapters/
// paths); this check answers first, in the agent's terms.
func windowsPaths(c Call, workspace string) string {
	for _, p := range []struct{ what, value string }{{"cwd", c.Cwd}, {"workspace", workspace}} {
		if api.WindowsPath(p.value) {
			return fmt.Sprintf("toolperm: the event's %s %q is a Windows path. %s.", p.what, p.value, api.WindowsPathsUnsupported)
		}
	}
	return ""
}
