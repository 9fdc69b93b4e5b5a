// Package buildinfo says which build of pdp is running: the module
// version, the VCS revision and time, the Go and OPA versions and whether
// cgo was on. It reads runtime/debug.ReadBuildInfo; a release build
// (scripts/release) also stamps the version, revision and time with
// -ldflags "-X", which win, because a build without a Git checkout (a
// container build) has no VCS settings to read.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set by the release script with -ldflags "-X <package>.version=…".
var (
	version  string
	revision string
	time     string
)

// Info is one build of pdp.
type Info struct {
	Version    string `json:"version"`            // a tag, a pseudo-version or "(devel)"
	Revision   string `json:"revision,omitempty"` // the VCS commit, "" when unknown
	Time       string `json:"time,omitempty"`     // the commit time (RFC 3339), "" when unknown
	Modified   bool   `json:"modified"`           // built from a tree with uncommitted changes
	GoVersion  string `json:"go_version"`
	OPAVersion string `json:"opa_version"` // "" in the hook build, which leaves OPA out
	Platform   string `json:"platform"`    // GOOS/GOARCH
	CGO        bool   `json:"cgo"`
}

// Read returns the running binary's Info.
func Read() Info {
	i := Info{Version: "(devel)", GoVersion: runtime.Version(), OPAVersion: opaVersion,
		Platform: runtime.GOOS + "/" + runtime.GOARCH, CGO: cgoEnabled}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			i.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Revision = s.Value
			case "vcs.time":
				i.Time = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true"
			}
		}
	}
	if version != "" {
		i.Version = version
	}
	if revision != "" {
		i.Revision, i.Modified = strings.TrimSuffix(revision, "+dirty"), strings.HasSuffix(revision, "+dirty")
	}
	if time != "" {
		i.Time = time
	}
	return i
}

// String is the one line `pdp version` prints, /health shows to admins
// and pdp_build_info carries in its labels:
//
//	pdp v1.2.0 (revision 3f2a…, 2026-12-01T22:00:00Z) go1.26.8 linux/amd64, OPA 1.22.3, cgo
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pdp %s", i.Version)
	if i.Revision != "" {
		rev := i.Revision
		if i.Modified {
			rev += "+dirty"
		}
		fmt.Fprintf(&b, " (revision %s", rev)
		if i.Time != "" {
			fmt.Fprintf(&b, ", %s", i.Time)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " %s %s, %s, %s", i.GoVersion, i.Platform, i.opa(), i.cgo())
	return b.String()
}

func (i Info) opa() string {
	if i.OPAVersion == "" {
		return "without OPA"
	}
	return "OPA " + i.OPAVersion
}

func (i Info) cgo() string {
	if i.CGO {
		return "cgo"
	}
	return "no cgo"
}
