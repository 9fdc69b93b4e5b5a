package buildinfo

import (
	"runtime"
	"strings"
	"testing"

	opaversion "github.com/open-policy-agent/opa/v1/version"
)

func TestReadWithoutStamps(t *testing.T) {
	i := Read()
	if i.Version == "" || i.GoVersion != runtime.Version() || i.OPAVersion != opaversion.Version || i.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Fatalf("%+v", i)
	}
	if i.CGO != cgoEnabled {
		t.Fatalf("cgo %v, built with %v", i.CGO, cgoEnabled)
	}
}

// stamp sets the -ldflags variables for one test, as the release script does.
func stamp(t *testing.T, v, rev, at string) {
	old := [3]string{version, revision, time}
	version, revision, time = v, rev, at
	t.Cleanup(func() { version, revision, time = old[0], old[1], old[2] })
}

func TestStampsWin(t *testing.T) {
	for _, tc := range []struct {
		name, version, revision, time string
		want                          Info
	}{
		{"clean", "v1.2.0", "3f2a9c1", "2026-12-01T22:00:00Z", Info{Version: "v1.2.0", Revision: "3f2a9c1", Time: "2026-12-01T22:00:00Z"}},
		{"dirty tree", "v1.2.0-rc.1", "3f2a9c1+dirty", "2026-12-01T22:00:00Z", Info{Version: "v1.2.0-rc.1", Revision: "3f2a9c1", Time: "2026-12-01T22:00:00Z", Modified: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stamp(t, tc.version, tc.revision, tc.time)
			got := Read()
			if got.Version != tc.want.Version || got.Revision != tc.want.Revision || got.Time != tc.want.Time || got.Modified != tc.want.Modified {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	base := Info{Version: "v1.2.0", GoVersion: "go1.26.8", OPAVersion: "1.22.3", Platform: "linux/arm64", CGO: true}
	withRev := base
	withRev.Revision, withRev.Time = "3f2a9c1", "2026-12-01T22:00:00Z"
	dirty := withRev
	dirty.Modified = true
	noCgo := base
	noCgo.CGO = false
	hookBuild := noCgo
	hookBuild.OPAVersion, hookBuild.Platform = "", "darwin/arm64"
	for _, tc := range []struct {
		name string
		info Info
		want string
	}{
		{"no VCS", base, "pdp v1.2.0 go1.26.8 linux/arm64, OPA 1.22.3, cgo"},
		{"revision and time", withRev, "pdp v1.2.0 (revision 3f2a9c1, 2026-12-01T22:00:00Z) go1.26.8 linux/arm64, OPA 1.22.3, cgo"},
		{"modified", dirty, "pdp v1.2.0 (revision 3f2a9c1+dirty, 2026-12-01T22:00:00Z) go1.26.8 linux/arm64, OPA 1.22.3, cgo"},
		{"without cgo", noCgo, "pdp v1.2.0 go1.26.8 linux/arm64, OPA 1.22.3, no cgo"},
		{"the hook build", hookBuild, "pdp v1.2.0 go1.26.8 darwin/arm64, without OPA, no cgo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.info.String(); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
			if strings.Contains(tc.info.String(), "\n") {
				t.Fatal("the version is one line")
			}
		})
	}
}
