package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/toolperm/pdp/frontends/hooks/hookconfig"
	"github.com/toolperm/pdp/internal/agents"
)

// TestTheAgentListIsTheOnlyOne: the hook endpoint's routes, pdp hook's
// sub-commands, pdp init's agents and the API document's enum are the
// agents of internal/agents, in its order — a fifth agent added there
// appears everywhere, and nowhere else can one be added.
func TestTheAgentListIsTheOnlyOne(t *testing.T) {
	names := agents.Names()
	if len(names) != 4 {
		t.Fatalf("agents %v", names)
	}

	var hooks []string
	for _, c := range hookCommand().Commands() {
		hooks = append(hooks, c.Name())
	}
	// Cobra lists sub-commands sorted.
	if !slices.Equal(slices.Sorted(slices.Values(hooks)), slices.Sorted(slices.Values(names))) {
		t.Errorf("pdp hook's sub-commands %v, want %v", hooks, names)
	}

	for _, n := range names {
		if _, err := hookconfig.Lookup(agents.All, n); err != nil {
			t.Errorf("pdp init --agent %s: %v", n, err)
		}
	}
	if r := runPDPProcess(t, t.TempDir(), "init", "--agent", "aider"); r.status == 0 || !strings.Contains(r.stderr, strings.Join(names, ", ")) {
		t.Errorf("pdp init of an unknown agent should list %v:\n%s", names, r)
	}

	srv, _ := pdpTestServer(t)
	for _, n := range append(slices.Clone(names), "aider") {
		resp, err := http.Post(srv.URL+"/v1/hooks/"+n, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		// A known agent answers every failure in its own shape (200); an
		// unknown one has no route.
		if want := map[bool]int{true: http.StatusOK, false: http.StatusNotFound}[n != "aider"]; resp.StatusCode != want {
			t.Errorf("POST /v1/hooks/%s: %d, want %d", n, resp.StatusCode, want)
		}
	}

	resp, err := http.Get(srv.URL + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name   string `json:"name"`
				Schema struct {
					Enum []string `json:"enum"`
				} `json:"schema"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var enum []string
	for _, p := range doc.Paths["/v1/hooks/{agent}"]["post"].Parameters {
		if p.Name == "agent" {
			enum = p.Schema.Enum
		}
	}
	if !slices.Equal(enum, names) {
		t.Errorf("the API document's agents %v, want %v", enum, names)
	}
}
