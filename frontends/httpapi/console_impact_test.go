package httpapi_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/policytest"
	"github.com/toolperm/pdp/pdp"
)

// TestConsolePolicyImpact uploads a bundle that loosens one rule on the
// Policy impact page and follows an example to its decision.
func TestConsolePolicyImpact(t *testing.T) {
	var s *service
	s = startServiceWith(t, func(cfg *httpapi.Config, _ *pdp.Components) {
		cfg.MaxBodyBytes = 1 << 20
		cfg.Impact = func(ctx context.Context, bundle []byte, f pdp.ReplayFilter) (api.ImpactReport, error) {
			candidate, err := policysource.Config{}.LoadBundle(ctx, bundle, "upload")
			if err != nil {
				return api.ImpactReport{}, pdp.Invalid("invalid_bundle", "%v", err)
			}
			return pdp.Impact(ctx, candidate, s.store, f, nil)
		}
	})
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "imp", "workspace": "/w"})
	mcp := map[string]any{"session_id": "imp", "tool": "mcp__github__create_issue", "args": map[string]any{"title": "x"}, "cwd": "/w"}
	expectDecision(t, s.decide(mcp), "deny", "default")
	bundlePath := filepath.Join(t.TempDir(), "candidate.tar.gz")
	if err := os.WriteFile(bundlePath, policytest.Bundle(t, policytest.Rules(func(rules map[string]any) { rules["mcp.github.*"] = "allow" })), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/ui/#impact"),
		chromedp.WaitVisible(`#impact-form`),
		chromedp.SetUploadFiles(`#impact-form input[name=bundle]`, []string{bundlePath}),
		chromedp.Click(`#impact-form button[type=submit]`),
		chromedp.WaitVisible(`#impact-rows tr.loosens`),
		textIs(`#impact-rows tr.loosens td:nth-child(3)`, "mcp.github.*"),
		chromedp.Click(`#impact-rows tr.loosens a`),
		chromedp.WaitVisible(`#impact-event`),
	); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "console-impact")
}
