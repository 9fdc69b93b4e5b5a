package metrics_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolperm/pdp/internal/buildinfo"
	"github.com/toolperm/pdp/metrics"
)

func TestBuildInfoGauge(t *testing.T) {
	rec := httptest.NewRecorder()
	metrics.New().Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	b := buildinfo.Read()
	for _, want := range []string{
		`version="` + b.Version + `"`, `goversion="` + b.GoVersion + `"`, `opa_version="` + b.OPAVersion + `"`, `revision="` + b.Revision + `"`,
	} {
		var line string
		for l := range strings.Lines(string(body)) {
			if strings.HasPrefix(l, "pdp_build_info{") {
				line = l
			}
		}
		if !strings.Contains(line, want) || !strings.HasSuffix(strings.TrimSpace(line), " 1") {
			t.Fatalf("pdp_build_info %q lacks %s", line, want)
		}
	}
}
