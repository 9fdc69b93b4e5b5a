// Package rego_test runs the Rego suite of tests/rego against policies/
// through OPA's own test runner, so `go test ./...` runs every test, and
// enforces the policy's coverage.
package rego_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/tester"
)

// minCoverage is the share of policies/ lines the suite must cover.
const minCoverage = 95.0

func TestRegoSuite(t *testing.T) {
	ctx := context.Background()
	onlyPolicyFiles := func(_ string, info fs.FileInfo, _ int) bool {
		name := info.Name()
		return !info.IsDir() && !strings.HasSuffix(name, ".rego") && name != "data.json"
	}
	modules, store, err := tester.Load([]string{"../../policies", "."}, onlyPolicyFiles)
	if err != nil {
		t.Fatalf("loading the policy and its tests: %v", err)
	}
	cov := cover.New()
	txn := storage.NewTransactionOrDie(ctx, store)
	defer store.Abort(ctx, txn)
	// OPA's runner stops a test after 5 s by default; under the race
	// detector and the coverage tracer on a loaded machine the loops over
	// every level and mode take longer, and a test must not fail for the
	// machine's speed.
	ch, err := tester.NewRunner().
		SetTimeout(5*time.Minute).
		SetStore(store).
		SetModules(modules).
		SetCoverageQueryTracer(cov).
		RunTests(ctx, txn)
	if err != nil {
		t.Fatalf("running the Rego tests: %v", err)
	}
	passed := 0
	for r := range ch {
		switch {
		case r.Error != nil:
			t.Errorf("%s.%s: error: %v", r.Package, r.Name, r.Error)
		case r.Fail:
			t.Errorf("%s.%s: FAIL (%s:%d)", r.Package, r.Name, r.Location.File, r.Location.Row)
		default:
			passed++
		}
	}
	if passed == 0 {
		t.Fatal("no Rego tests ran")
	}

	report := cov.Report(modules)
	covered, total := 0, 0
	for file, fr := range report.Files {
		if filepath.Base(filepath.Dir(file)) != "policies" {
			continue
		}
		covered += fr.CoveredLines
		total += fr.CoveredLines + fr.NotCoveredLines
		for _, rng := range fr.NotCovered {
			t.Logf("not covered: %s:%d-%d", file, rng.Start.Row, rng.End.Row)
		}
	}
	if total == 0 {
		t.Fatal("the coverage report has no lines of policies/")
	}
	pct := 100 * float64(covered) / float64(total)
	t.Logf("%d Rego tests passed; policies/ coverage %.1f%% (%d of %d lines)", passed, pct, covered, total)
	if pct < minCoverage {
		t.Errorf("policies/ coverage %.1f%% is under %.0f%%", pct, minCoverage)
	}
}
