package policysource_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/keys"
	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/adapters/shell"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/policytest"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/policies"
)

// makeBundle builds a bundle of the built-in policy with a revision; a
// non-nil change edits its data (e.g. adds a rule), extra adds modules.
func makeBundle(t *testing.T, revision string, change func(data map[string]any), extra map[string]string) bundle.Bundle {
	t.Helper()
	b := bundle.Bundle{Manifest: bundle.Manifest{Revision: revision}}
	files := policytest.Files(t, func(data map[string]any) {
		b.Data = data
		if change != nil {
			change(data)
		}
	})
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if strings.HasSuffix(p, ".rego") {
			b.Modules = append(b.Modules, module(t, "/policies/"+p, string(files[p])))
		}
	}
	for name, src := range extra {
		b.Modules = append(b.Modules, bundle.ModuleFile{Path: "/policies/" + name, URL: "/policies/" + name, Raw: []byte(src)})
	}
	return b
}

func module(t *testing.T, path, src string) bundle.ModuleFile {
	t.Helper()
	m, err := ast.ParseModuleWithOpts(path, src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	return bundle.ModuleFile{Path: path, URL: path, Raw: []byte(src), Parsed: m}
}

// denyReads is a data change that makes every read a deny.
func denyReads(data map[string]any) { data["rules"].(map[string]any)["fs.read"] = "deny" }

func tarball(t *testing.T, b bundle.Bundle) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := bundle.NewWriter(&buf).UseModulePath(true).DisableFormat(true).Write(b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// replace writes data to path the way deploy tools do: a new file renamed over the old.
func replace(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func readCall() pdp.Call {
	return pdp.Call{Request: api.DecideRequest{SessionID: "s", Tool: "read_file", Args: map[string]any{"path": "/w/a"}}, Session: &pdp.SessionTree{Workspace: "/w"}}
}

// recorder counts activation attempts.
type recorder struct{ ok, failed atomic.Int32 }

func (r *recorder) PolicyActivated(_ *pdp.Policy, err error) {
	if err != nil {
		r.failed.Add(1)
	} else {
		r.ok.Add(1)
	}
}

func watch(t *testing.T, cfg policysource.Config) (*policysource.Watcher, *pdp.Engine, *recorder) {
	t.Helper()
	e := pdp.New(nil, pdp.Components{Shell: shell.Parser{}, Workspace: paths.Resolver{}})
	rec := &recorder{}
	w := policysource.NewWatcher(cfg, e, policysource.WatchOptions{Poll: 100 * time.Millisecond, Observer: rec})
	if _, err := w.Reload(context.Background()); err != nil {
		t.Fatalf("initial load: %v", err)
	}
	return w, e, rec
}

func decision(t *testing.T, e *pdp.Engine) api.Decision {
	t.Helper()
	d, err := e.Decide(context.Background(), readCall())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func eventually(t *testing.T, within time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTarballHotReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.tar.gz")
	replace(t, path, tarball(t, makeBundle(t, "v1", nil, nil)))
	w, e, rec := watch(t, policysource.Config{Path: path})
	if d := decision(t, e); d.Revision != "v1" || d.Decision != api.Allow {
		t.Fatalf("v1: %+v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Run(ctx)

	replace(t, path, tarball(t, makeBundle(t, "v2", denyReads, nil)))
	eventually(t, 5*time.Second, func() bool { return e.Policy().Revision == "v2" }, "activating v2")
	if d := decision(t, e); d.Decision != api.Deny || d.Revision != "v2" {
		t.Fatalf("v2: %+v", d)
	}

	// A broken one changes nothing users see, except a logged, counted failure.
	replace(t, path, []byte("this is not a tarball"))
	eventually(t, 5*time.Second, func() bool { return w.Status().LastError != nil }, "recording the failure")
	if e.Policy().Revision != "v2" || rec.failed.Load() == 0 {
		t.Fatalf("after a broken bundle: revision %s, %d failures", e.Policy().Revision, rec.failed.Load())
	}
	// And the next good change is tried again.
	replace(t, path, tarball(t, makeBundle(t, "v4", nil, nil)))
	eventually(t, 5*time.Second, func() bool { return e.Policy().Revision == "v4" }, "activating v4")
}

func TestBrokenBundlesKeepTheOldRevision(t *testing.T) {
	signer, verifier := rsaKeys(t)
	other, _ := rsaKeys(t)
	good := makeBundle(t, "good", nil, nil)
	cases := map[string]struct {
		raw    []byte
		verify bool
	}{
		"syntax error":      {tarballRaw(t, makeBundle(t, "bad", nil, nil), "policies/chain.rego", "package toolperm\n\nanswer := {\n"), false},
		"compile error":     {tarball(t, makeBundle(t, "bad", nil, map[string]string{"x.rego": "package toolperm\n\nbad := 1 + \"a\"\n"})), false},
		"truncated tarball": {tarball(t, good)[:200], false},
		"not gzip":          {[]byte("{}"), false},
		"oversized":         {append(tarball(t, good), make([]byte, 2<<20)...), false},
		"unsigned":          {tarball(t, good), true},
		"wrong signature":   {signed(t, good, other), true},
		"tampered":          {tamper(t, signed(t, makeBundle(t, "good", nil, nil), signer)), true},
	}
	// A policy whose entry point answers the wrong shape.
	cases["wrong answer shape"] = struct {
		raw    []byte
		verify bool
	}{tarballRaw(t, makeBundle(t, "bad", nil, nil), "policies/chain.rego", "package toolperm\n\nanswer := \"allow\"\n\ndecision := answer\n"), false}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "policy.tar.gz")
			cfg := policysource.Config{Path: path, MaxBytes: 1 << 20}
			start := tarball(t, makeBundle(t, "v1", nil, nil))
			if tc.verify {
				cfg.Verification = verification(t, verifier)
				start = signed(t, makeBundle(t, "v1", nil, nil), signer)
			}
			replace(t, path, start)
			w, e, rec := watch(t, cfg)
			replace(t, path, tc.raw)
			activated, err := w.Reload(context.Background())
			if activated || err == nil {
				t.Fatalf("a broken bundle was activated (err %v)", err)
			}
			t.Logf("refused: %v", err)
			if e.Policy().Revision != "v1" || decision(t, e).Revision != "v1" {
				t.Fatalf("revision changed to %s", e.Policy().Revision)
			}
			if w.Status().LastError == nil || rec.failed.Load() != 1 {
				t.Fatalf("failure not recorded: %+v, %d", w.Status(), rec.failed.Load())
			}
			// The same broken content is not tried again on every poll.
			if _, err := w.Reload(context.Background()); err != nil || rec.failed.Load() != 1 {
				t.Fatalf("the same broken bundle was tried again: %v", err)
			}
		})
	}
}

func TestSignedBundles(t *testing.T) {
	signer, verifier := rsaKeys(t)
	path := filepath.Join(t.TempDir(), "policy.tar.gz")
	replace(t, path, signed(t, makeBundle(t, "signed-1", nil, nil), signer))
	cfg := policysource.Config{Path: path, Verification: verification(t, verifier)}
	_, e, _ := watch(t, cfg)
	if e.Policy().Revision != "signed-1" {
		t.Fatalf("revision %s", e.Policy().Revision)
	}
	if _, err := policysource.Load(context.Background(), policysource.Config{Path: t.TempDir(), Verification: cfg.Verification}); err == nil {
		t.Fatal("a directory was accepted with verification keys configured")
	}
	replace(t, path, tarball(t, makeBundle(t, "unsigned", nil, nil)))
	if _, err := policysource.Load(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "signatures") {
		t.Fatalf("an unsigned bundle loaded: %v", err)
	}
}

func TestHTTPSourceWithETag(t *testing.T) {
	var mu sync.Mutex
	current := tarball(t, makeBundle(t, "h1", nil, nil))
	var downloads, notModified atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body := current
		mu.Unlock()
		etag := fmt.Sprintf(`"%x"`, len(body)) + fmt.Sprintf(`"%x"`, body[len(body)-8:])
		if r.Header.Get("If-None-Match") == etag {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		downloads.Add(1)
		w.Header().Set("ETag", etag)
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	w, e, _ := watch(t, policysource.Config{Path: srv.URL + "/bundle.tar.gz"})
	if e.Policy().Revision != "h1" || downloads.Load() != 1 {
		t.Fatalf("revision %s after %d downloads", e.Policy().Revision, downloads.Load())
	}
	for i := 0; i < 3; i++ {
		if activated, err := w.Reload(context.Background()); activated || err != nil {
			t.Fatalf("an unchanged bundle was activated again: %v", err)
		}
	}
	if downloads.Load() != 1 || notModified.Load() != 3 {
		t.Fatalf("%d downloads, %d not-modified", downloads.Load(), notModified.Load())
	}
	mu.Lock()
	current = tarball(t, makeBundle(t, "h2", denyReads, nil))
	mu.Unlock()
	if activated, err := w.Reload(context.Background()); !activated || err != nil {
		t.Fatalf("h2 not activated: %v", err)
	}
	if d := decision(t, e); d.Revision != "h2" || d.Decision != api.Deny {
		t.Fatalf("h2: %+v", d)
	}
}

func TestDirectoryReload(t *testing.T) {
	dir := t.TempDir()
	names, err := fs.Glob(policies.FS, "*")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		raw, _ := fs.ReadFile(policies.FS, name)
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, e, _ := watch(t, policysource.Config{Path: dir})
	first := e.Policy().Revision
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Run(ctx)
	raw, _ := os.ReadFile(filepath.Join(dir, "data.json"))
	var data map[string]any
	_ = json.Unmarshal(raw, &data)
	denyReads(data)
	edited, _ := json.MarshalIndent(data, "", "  ")
	replace(t, filepath.Join(dir, "data.json"), edited)
	eventually(t, 5*time.Second, func() bool { return e.Policy().Revision != first }, "reloading the directory")
	if decision(t, e).Decision != api.Deny {
		t.Fatal("the edited rule does not apply")
	}
}

func TestSwapUnderConcurrentDecisions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.tar.gz")
	v1, v2 := tarball(t, makeBundle(t, "allow-reads", nil, nil)), tarball(t, makeBundle(t, "deny-reads", denyReads, nil))
	replace(t, path, v1)
	w, e, _ := watch(t, policysource.Config{Path: path})
	want := map[string]string{"allow-reads": api.Allow, "deny-reads": api.Deny}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var decided, wrong atomic.Int32
	var firstWrong atomic.Value // what the first wrong answer was, to say why
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				d, err := e.Decide(context.Background(), readCall())
				decided.Add(1)
				if err != nil || want[d.Revision] != d.Decision {
					wrong.Add(1)
					firstWrong.CompareAndSwap(nil, fmt.Sprintf("%s by %s at %s (%v): %s", d.Decision, d.Rule, d.Revision, err, d.Reason))
				}
			}
		}()
	}
	for i := 0; i < 20; i++ {
		replace(t, path, [][]byte{v2, v1}[i%2])
		if _, err := w.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if wrong.Load() != 0 || decided.Load() == 0 {
		t.Fatalf("%d of %d decisions were errors or mixed a revision with another's answer; the first: %v", wrong.Load(), decided.Load(), firstWrong.Load())
	}
}

// tarballRaw writes the bundle with one module's source replaced by raw
// text (which need not parse).
func tarballRaw(t *testing.T, b bundle.Bundle, path, src string) []byte {
	t.Helper()
	for i := range b.Modules {
		if strings.TrimPrefix(b.Modules[i].Path, "/") == path {
			b.Modules[i] = bundle.ModuleFile{Path: b.Modules[i].Path, URL: b.Modules[i].URL, Raw: []byte(src)}
		}
	}
	return tarball(t, b)
}

func rsaKeys(t *testing.T) (private, public string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
}

func verification(t *testing.T, public string) *bundle.VerificationConfig {
	t.Helper()
	// OPA takes the key from a file when the argument names one; passing
	// the PEM itself makes it stat a path that may be too long to stat.
	path := filepath.Join(t.TempDir(), "public.pem")
	if err := os.WriteFile(path, []byte(public), 0o600); err != nil {
		t.Fatal(err)
	}
	kc, err := keys.NewKeyConfig(path, "RS256", "")
	if err != nil {
		t.Fatal(err)
	}
	return bundle.NewVerificationConfig(map[string]*keys.Config{"default": kc}, "default", "", nil)
}

func signed(t *testing.T, b bundle.Bundle, private string) []byte {
	t.Helper()
	if err := b.GenerateSignature(bundle.NewSigningConfig(private, "RS256", ""), "default", true); err != nil {
		t.Fatal(err)
	}
	return tarball(t, b)
}

// tamper changes data.json inside a signed tarball and keeps every other
// entry, .signatures.json included, as it was.
func tamper(t *testing.T, raw []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	tw := tar.NewWriter(zw)
	seen := false
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		if strings.TrimPrefix(hdr.Name, "/") == "data.json" {
			var data map[string]any
			_ = json.Unmarshal(body, &data)
			denyReads(data)
			body, _ = json.Marshal(data)
			seen = true
		}
		hdr.Size = int64(len(body))
		_ = tw.WriteHeader(hdr)
		_, _ = tw.Write(body)
	}
	_ = tw.Close()
	_ = zw.Close()
	if !seen {
		t.Fatal("no data.json in the bundle")
	}
	return out.Bytes()
}
