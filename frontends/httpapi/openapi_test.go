package httpapi_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/sqlite"
)

// TestOpenAPIDocumentsEveryRoute: every route the server registers is in
// the document, and every operation of the document is a route.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "pdp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	e := httpapi.New(httpapi.Config{Engine: pdp.New(nil, pdp.Components{}), Store: store,
		Metrics: http.NotFoundHandler(), PolicyStatus: func() any { return nil }})

	param := regexp.MustCompile(`:([a-z]+)`)
	registered := map[string]bool{}
	for _, r := range e.Routes() {
		if r.Method == "echo_route_not_found" || strings.HasPrefix(r.Method, "echo_") {
			continue
		}
		path := strings.Replace(param.ReplaceAllString(r.Path, "{$1}"), "*", "{path}", 1)
		registered[r.Method+" "+path] = true
	}

	if len(registered) < 14 {
		t.Fatalf("only %d routes registered: %v", len(registered), registered)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(httpapi.OpenAPI, &doc); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	var missing, extra []string
	for r := range registered {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for d := range documented {
		if !registered[d] {
			extra = append(extra, d)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Fatalf("routes not in the document: %v; documented but not served: %v", missing, extra)
	}
}

func TestOpenAPIIsServed(t *testing.T) {
	s := newService(t)
	doc := s.mustStatus(200, "GET", "/v1/openapi.json", nil)
	if doc["openapi"] == nil || doc["paths"] == nil {
		t.Fatalf("served document: %v", doc)
	}
}
