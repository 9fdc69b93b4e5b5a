// Package layers_test holds the module's packages to the layers of
// docs/architecture.md: every import of the module's own packages points
// down.
package layers_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/toolperm/pdp/"

// layer says which of the module's packages a package under prefix may
// import (by prefix; "" is its own sub-packages only).
type layer struct {
	prefix string
	may    []string
}

// layers, most specific prefix first; a package matches the first.
var layers = []layer{
	{"api", nil},
	{"client", []string{"api"}},
	{"pdp", []string{"api", "pdp"}},
	{"feed", []string{"api", "pdp"}},
	{"metrics", []string{"api", "pdp", "internal/buildinfo"}},
	// Outbound adapters: the core and leaf libraries, never another adapter.
	{"adapters/", []string{"api", "pdp", "feed", "internal/buildinfo", "internal/filewatch", "internal/projectfile"}},
	// The stores: the core and the SQL code they share.
	{"store/", []string{"api", "pdp", "feed", "store/", "internal/cgorequired"}},
	// The agents' hook adapters: the hook flow they share, the client.
	{"frontends/hooks/", []string{"api", "client", "frontends/hooks/hookflow", "internal/projectfile"}},
	// Front ends: the core, the hook flow, the feed; never an outbound
	// adapter or a store.
	{"frontends/", []string{"api", "client", "pdp", "feed", "frontends/hooks/hookflow", "internal/buildinfo"}},
	{"internal/agents", []string{"frontends/hooks/"}},
	{"internal/tlsserve", []string{"internal/config", "internal/filewatch"}},
	// The composition root: everything below, no command.
	{"internal/app", []string{"api", "pdp", "feed", "metrics", "policies", "adapters/", "store/", "frontends/", "internal/"}},
}

func TestImportsPointDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", "github.com/toolperm/pdp/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		pkg = strings.TrimPrefix(pkg, module)
		l, ok := layerOf(pkg)
		if !ok {
			continue
		}
		checked++
		for _, imp := range strings.Fields(imports) {
			own, ok := strings.CutPrefix(imp, module)
			if !ok || own == pkg || strings.HasPrefix(own, pkg+"/") {
				continue
			}
			if !allowed(own, l.may) {
				t.Errorf("%s imports %s: the layer %s may import only %v", pkg, own, l.prefix, l.may)
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d packages checked: the layers no longer name the tree", checked)
	}

	// Nothing but the commands, the test server and tests builds the
	// composition root.
	out, err = exec.Command("go", "list", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", "github.com/toolperm/pdp/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		pkg = strings.TrimPrefix(pkg, module)
		if strings.HasPrefix(pkg, "cmd/") || pkg == "internal/testserver" || strings.HasPrefix(pkg, "internal/app") {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if imp == module+"internal/app" || strings.HasPrefix(imp, module+"cmd/") {
				t.Errorf("%s imports %s, which is above it", pkg, strings.TrimPrefix(imp, module))
			}
		}
	}
}

func layerOf(pkg string) (layer, bool) {
	for _, l := range layers {
		if pkg == strings.TrimSuffix(l.prefix, "/") || strings.HasPrefix(pkg, l.prefix) && (strings.HasSuffix(l.prefix, "/") || strings.HasPrefix(pkg, l.prefix+"/")) {
			return l, true
		}
	}
	return layer{}, false
}

func allowed(pkg string, may []string) bool {
	for _, m := range may {
		if pkg == strings.TrimSuffix(m, "/") || strings.HasPrefix(pkg, m) && (strings.HasSuffix(m, "/") || strings.HasPrefix(pkg, m+"/")) {
			return true
		}
	}
	return false
}
