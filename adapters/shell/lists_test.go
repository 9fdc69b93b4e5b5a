package shell

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestShellListsAreThePolicys: every program the adapter reads as a
// shell is one the policy treats as an interpreter, and every program it
// reads as running a later word is one of the policy's wrappers, under
// the one normalisation both use (lower case, last path element, version
// suffix dropped).
func TestShellListsAreThePolicys(t *testing.T) {
	raw, err := os.ReadFile("../../policies/data.json")
	if err != nil {
		t.Fatal(err)
	}
	var data struct {
		Shell struct {
			Interpreters []string `json:"interpreters"`
			Wrappers     []string `json:"wrappers"`
		} `json:"shell"`
	}
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatal(err)
	}
	has := func(list []string, name string) bool {
		for _, w := range list {
			if strings.ToLower(w) == name {
				return true
			}
		}
		return false
	}
	for name := range shells {
		if !has(data.Shell.Interpreters, name) {
			t.Errorf("shell %q is not on data.shell.interpreters", name)
		}
	}
	for name := range precommands {
		if !has(data.Shell.Wrappers, name) {
			t.Errorf("precommand %q is not on data.shell.wrappers", name)
		}
	}
	for _, word := range []string{"/usr/bin/RBASH", "bash5.2", "Zsh", "./mksh"} {
		if !named(word, shells) {
			t.Errorf("%q is not read as a shell", word)
		}
	}
}
