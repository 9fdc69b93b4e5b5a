package cgorequired_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestABuildWithoutCgoSaysSo builds this package with CGO_ENABLED=0 (a
// moment: it is one file) and checks that store/sqlite, which needs
// cgo, depends on it, so its message is what such a build of pdp prints.
func TestABuildWithoutCgoSaysSo(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	build := exec.Command(goBin, "build", "-o", os.DevNull, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	if err == nil {
		t.Fatal("a build without cgo succeeded")
	}
	if !strings.Contains(string(out), "pdp_needs_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler") {
		t.Fatalf("the failure does not say cgo is needed:\n%s", out)
	}

	deps, err := exec.Command(goBin, "list", "-deps", "github.com/toolperm/pdp/store/sqlite").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if !slices.Contains(strings.Fields(string(deps)), "github.com/toolperm/pdp/internal/cgorequired") {
		t.Fatal("store/sqlite does not import internal/cgorequired")
	}
}
