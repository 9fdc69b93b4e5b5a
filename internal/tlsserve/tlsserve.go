// Package tlsserve serves the API over TLS 1.2 or later with a
// certificate read from PEM files and swapped in place when they change
// or on SIGHUP: new handshakes get the new certificate, connections
// already open keep theirs, none is dropped, and nothing restarts.
//
//	cert, err := tlsserve.Open(s, hasTokens, loopback) // nil: plain HTTP
//	go cert.Watch(ctx, tlsserve.WatchOptions{Logger: logger})
//	err = tlsserve.Serve(srv, ln, cert)
package tlsserve

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolperm/pdp/internal/config"
)

// Settings are the server's TLS keys of the configuration.
type Settings struct {
	// CertFile is the PEM certificate, its chain after it; KeyFile its
	// PEM private key. Both or neither.
	CertFile, KeyFile string
	// AllowPlaintext lets a server with tokens listen off loopback
	// without TLS, for a proxy in front that terminates it.
	AllowPlaintext bool
}

// SettingsOf are the TLS keys of the configuration's server section.
func SettingsOf(s config.Server) Settings {
	return Settings{CertFile: s.TLSCertFile, KeyFile: s.TLSKeyFile, AllowPlaintext: s.AllowPlaintext}
}

// The configuration's names of the settings, for messages.
const (
	certKey      = "server.tls_cert_file (PDP_SERVER_TLS_CERT_FILE)"
	keyKey       = "server.tls_key_file (PDP_SERVER_TLS_KEY_FILE)"
	plaintextKey = "server.allow_plaintext: true (PDP_SERVER_ALLOW_PLAINTEXT=true)"
)

// Check says whether a server with these settings may start on addr:
// a certificate needs its key and a key its certificate, and bearer
// tokens (tokens) are not sent in plaintext off loopback unless
// AllowPlaintext says a proxy in front terminates TLS.
func (s Settings) Check(addr string, tokens, loopback bool) error {
	switch {
	case s.CertFile != "" && s.KeyFile == "":
		return fmt.Errorf("%s is set but %s is missing: TLS needs both", certKey, keyKey)
	case s.KeyFile != "" && s.CertFile == "":
		return fmt.Errorf("%s is set but %s is missing: TLS needs both", keyKey, certKey)
	case s.CertFile == "" && tokens && !loopback && !s.AllowPlaintext:
		return fmt.Errorf("refusing to take bearer tokens in plaintext on %s: %s and %s are missing; set them to serve TLS, or set %s when a proxy in front terminates TLS",
			addr, certKey, keyKey, plaintextKey)
	}
	return nil
}

// Open checks s (see Check) and loads its certificate; it is nil, with
// no error, when the server is to speak plain HTTP.
func Open(s Settings, addr string, tokens, loopback bool) (*Certificate, error) {
	if err := s.Check(addr, tokens, loopback); err != nil {
		return nil, err
	}
	if s.CertFile == "" {
		return nil, nil
	}
	return Load(s.CertFile, s.KeyFile)
}

// Certificate is the server's certificate, reloaded from its files.
type Certificate struct {
	certFile, keyFile string
	current           atomic.Pointer[loaded]
	mu                sync.Mutex // one reload at a time
}

// loaded is one version of the files and the certificate they hold.
type loaded struct {
	certPEM, keyPEM []byte
	cert            *tls.Certificate
}

// Load reads the PEM certificate and key files; they must hold a
// certificate and its private key.
func Load(certFile, keyFile string) (*Certificate, error) {
	c := &Certificate{certFile: certFile, keyFile: keyFile}
	if _, err := c.Reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// Why a reload was refused (RefusedReason).
const (
	// RefusedInvalid: the files cannot be read or do not hold a
	// certificate and its key.
	RefusedInvalid = "invalid"
	// RefusedExpired: the certificate's validity has ended.
	RefusedExpired = "expired"
	// RefusedNotYetValid: the certificate's validity has not begun.
	RefusedNotYetValid = "not_yet_valid"
)

// refusedError is a reload's error, with its reason.
type refusedError struct {
	reason string
	err    error
}

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// RefusedReason is why Reload refused the files (RefusedInvalid,
// RefusedExpired, RefusedNotYetValid), or "" for a nil error.
func RefusedReason(err error) string {
	if err == nil {
		return ""
	}
	if r, ok := errors.AsType[*refusedError](err); ok {
		return r.reason
	}
	return RefusedInvalid
}

// Reload reads the files again and, when they changed and hold a valid
// certificate and key, serves it from the next handshake on. It returns
// whether a new certificate was swapped in; on an error the one before
// keeps serving. Once one serves, a certificate outside its validity
// (expired, or not valid yet) is refused too: every handshake with it
// would fail, where the one before may still serve.
func (c *Certificate) Reload() (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	certPEM, err := os.ReadFile(c.certFile)
	if err != nil {
		return false, fmt.Errorf("TLS certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(c.keyFile)
	if err != nil {
		return false, fmt.Errorf("TLS key: %w", err)
	}
	old := c.current.Load()
	if old != nil && bytes.Equal(old.certPEM, certPEM) && bytes.Equal(old.keyPEM, keyPEM) {
		return false, nil
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false, fmt.Errorf("TLS certificate %s and key %s: %w", c.certFile, c.keyFile, err)
	}
	if old != nil {
		now, leaf := time.Now(), pair.Leaf
		switch {
		case now.After(leaf.NotAfter):
			return false, &refusedError{RefusedExpired, fmt.Errorf("TLS certificate %s (%s) expired at %s",
				c.certFile, leaf.Subject, leaf.NotAfter.UTC().Format(time.RFC3339))}
		case now.Before(leaf.NotBefore):
			return false, &refusedError{RefusedNotYetValid, fmt.Errorf("TLS certificate %s (%s) is not valid before %s",
				c.certFile, leaf.Subject, leaf.NotBefore.UTC().Format(time.RFC3339))}
		}
	}
	c.current.Store(&loaded{certPEM: certPEM, keyPEM: keyPEM, cert: &pair})
	return true, nil
}

// Leaf is the certificate being served (its first, the server's own).
func (c *Certificate) Leaf() *x509.Certificate { return c.current.Load().cert.Leaf }

// Config is the server's TLS configuration: TLS 1.2 or later, the
// certificate as it stands at each handshake.
func (c *Certificate) Config() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return c.current.Load().cert, nil
		},
	}
}

// Serve runs srv on ln: over TLS with cert, plain HTTP when cert is nil.
func Serve(srv *http.Server, ln net.Listener, cert *Certificate) error {
	if cert == nil {
		return srv.Serve(ln)
	}
	srv.TLSConfig = cert.Config()
	return srv.ServeTLS(ln, "", "")
}

// Scheme is the URL scheme a server with cert answers on.
func Scheme(cert *Certificate) string {
	if cert == nil {
		return "http"
	}
	return "https"
}

// expiry says how the certificate's validity stands at now, or "" when
// it is valid for longer than a week.
func expiry(leaf *x509.Certificate, now time.Time) string {
	switch {
	case leaf == nil:
		return ""
	case now.After(leaf.NotAfter):
		return "expired"
	case now.Before(leaf.NotBefore):
		return "not valid yet"
	case leaf.NotAfter.Sub(now) < 24*time.Hour:
		return "expires within a day"
	case leaf.NotAfter.Sub(now) < 7*24*time.Hour:
		return "expires within a week"
	}
	return ""
}
