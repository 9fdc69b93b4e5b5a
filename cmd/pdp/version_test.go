package main

import (
	"strings"
	"testing"

	"github.com/toolperm/pdp/internal/buildinfo"
)

func TestVersionCommandAndFlagPrintTheBuild(t *testing.T) {
	want := buildinfo.Read().String() + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, err := runPDPText(t, args...)
			if err != nil || out != want {
				t.Fatalf("pdp %v: %v\n got %q\nwant %q", args, err, out, want)
			}
		})
	}
	t.Run("version --json", func(t *testing.T) {
		doc, _, err := runPDP(t, "", "version", "--json")
		if err != nil {
			t.Fatal(err)
		}
		info := buildinfo.Read()
		if doc["version"] != info.Version || doc["go_version"] != info.GoVersion || doc["opa_version"] != info.OPAVersion || doc["cgo"] != info.CGO {
			t.Fatalf("%v, want %+v", doc, info)
		}
	})
}

// runPDPText runs the pdp command line and returns what it printed.
func runPDPText(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := rootCommand()
	var out strings.Builder
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}
