package httpapi_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/toolperm/pdp/adapters/httpapi"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/policies"
)

// TestConsolePolicyImpact uploads a bundle that loosens one rule on the
// Policy impact page and follows an example to its decision.
func TestConsolePolicyImpact(t *testing.T) {
	var s *service
	s = startServiceWith(t, filepath.Join(t.TempDir(), "pdp.db"), func(cfg *httpapi.Config, _ *pdp.Components) {
		cfg.MaxBodyBytes = 1 << 20
		cfg.Impact = func(ctx context.Context, bundle []byte, f pdp.ReplayFilter) (pdp.ImpactReport, error) {
			candidate, err := policysource.Config{}.LoadBundle(ctx, bundle, "upload")
			if err != nil {
				return pdp.ImpactReport{}, pdp.Invalid("invalid_bundle", "%v", err)
			}
			return pdp.Impact(ctx, candidate, s.store, f, nil)
		}
	})
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "imp", "workspace": "/w"})
	mcp := map[string]any{"session_id": "imp", "tool": "mcp__github__create_issue", "args": map[string]any{"title": "x"}, "cwd": "/w"}
	expectDecision(t, s.decide(mcp), "deny", "default")
	bundlePath := filepath.Join(t.TempDir(), "candidate.tar.gz")
	if err := os.WriteFile(bundlePath, loosenedBundle(t), 0o644); err != nil {
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

// loosenedBundle is the built-in policy as a bundle, with a rule that
// allows every mcp.github.* tool.
func loosenedBundle(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := fs.WalkDir(policies.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := policies.FS.ReadFile(p)
		if err != nil {
			return err
		}
		if p == "data.json" {
			var data map[string]any
			if err := json.Unmarshal(b, &data); err != nil {
				return err
			}
			data["rules"].(map[string]any)["mcp.github.*"] = "allow"
			if b, err = json.Marshal(data); err != nil {
				return err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: "/" + p, Mode: 0o644, Size: int64(len(b))}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
