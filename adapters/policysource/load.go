package policysource

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/toolperm/pdp/pdp"
)

// Kind is where a policy comes from.
type Kind string

// The kinds of sources.
const (
	Builtin   Kind = "builtin"
	Directory Kind = "directory"
	Tarball   Kind = "tarball"
	HTTP      Kind = "http"
)

// Config says which policy to load and how to trust it.
type Config struct {
	// Path is a directory, a .tar.gz bundle, an http(s):// URL, or empty
	// for the built-in policy.
	Path string
	// Builtin is the built-in policy's files.
	Builtin fs.FS
	// Verification, when set, requires every bundle to carry a
	// .signatures.json that verifies with its keys.
	Verification *bundle.VerificationConfig
	// MaxBytes bounds a bundle's size (default 16 MiB).
	MaxBytes int64
}

// KindOf tells what kind of source a path names.
func KindOf(path string) Kind {
	switch {
	case path == "":
		return Builtin
	case strings.HasPrefix(path, "http://"), strings.HasPrefix(path, "https://"):
		return HTTP
	case strings.HasSuffix(path, ".tar.gz"), strings.HasSuffix(path, ".tgz"):
		return Tarball
	}
	return Directory
}

func (c Config) maxBytes() int64 {
	if c.MaxBytes > 0 {
		return c.MaxBytes
	}
	return 16 << 20
}

// Validate refuses configurations that cannot be trusted as asked: with
// verification keys, only bundles (which carry signatures) may be served.
func (c Config) Validate() error {
	if c.Verification != nil && (KindOf(c.Path) == Directory || KindOf(c.Path) == Builtin) {
		return errors.New("policy verification keys are configured, so the policy must be a signed bundle (.tar.gz or URL), not a directory or the built-in policy")
	}
	return nil
}

// Load loads, compiles and tests the configured policy once (an HTTP
// source is fetched without ETag). It is what `pdp decide` and the
// start-up of `pdp serve` use.
func Load(ctx context.Context, c Config) (*pdp.Policy, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var p *pdp.Policy
	var err error
	switch KindOf(c.Path) {
	case Builtin:
		p, err = LoadFS(ctx, c.Builtin, "builtin")
	case Directory:
		p, err = LoadDir(ctx, c.Path)
	case Tarball:
		p, _, err = c.loadTarball(ctx)
	case HTTP:
		var f fetched
		f, err = fetch(ctx, nil, c, "")
		if err == nil && f.notModified {
			err = errors.New("unexpected 304 without an ETag")
		}
		if err == nil {
			p, err = c.compileBundle(ctx, f.body, c.Path)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := p.Check(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// loadTarball reads the bundle file; digest is its content hash.
func (c Config) loadTarball(ctx context.Context) (*pdp.Policy, string, error) {
	info, err := os.Stat(c.Path)
	if err != nil {
		return nil, "", fmt.Errorf("policy bundle: %w", err)
	}
	if info.Size() > c.maxBytes() {
		return nil, "", fmt.Errorf("policy bundle %s is %d bytes, over the %d-byte limit", c.Path, info.Size(), c.maxBytes())
	}
	raw, err := os.ReadFile(c.Path)
	if err != nil {
		return nil, "", fmt.Errorf("policy bundle: %w", err)
	}
	p, err := c.compileBundle(ctx, raw, c.Path)
	return p, digest(raw), err
}

// LoadBundle compiles and checks a bundle tarball given as bytes (an
// upload to judge, not one to serve): verified when keys are configured,
// bounded by the configured size.
func (c Config) LoadBundle(ctx context.Context, raw []byte, source string) (*pdp.Policy, error) {
	p, err := c.compileBundle(ctx, raw, source)
	if err != nil {
		return nil, err
	}
	if err := p.Check(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// compileBundle reads a bundle tarball with OPA's reader (verifying its
// signatures when keys are configured) and compiles it.
func (c Config) compileBundle(ctx context.Context, raw []byte, source string) (*pdp.Policy, error) {
	if int64(len(raw)) > c.maxBytes() {
		return nil, fmt.Errorf("bundle %s is %d bytes, over the %d-byte limit", source, len(raw), c.maxBytes())
	}
	r := bundle.NewReader(bytes.NewReader(raw)).WithSizeLimitBytes(c.maxBytes())
	if c.Verification != nil {
		r = r.WithBundleVerificationConfig(c.Verification)
	} else {
		r = r.WithSkipBundleVerification(true)
	}
	b, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("reading bundle %s: %w", source, err)
	}
	return pdp.CompileBundle(ctx, b, source, digest(raw))
}

func digest(raw []byte) string {
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])[:16]
}
