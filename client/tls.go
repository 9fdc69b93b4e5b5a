package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
)

// WithCAFile trusts the PEM certificates in file, and only those, for
// the server's certificate: a PDP with a certificate of a private CA, or
// self-signed. The file is read once, by New; if it cannot be read, or
// the client's HTTP client (WithHTTPClient) has a transport other than
// an *http.Transport, every request fails with the reason. An empty file
// keeps the system's roots.
func WithCAFile(file string) Option { return func(c *Client) { c.caFile = file } }

// NewTransport is http.DefaultTransport trusting only the certificates in
// caFile (the system's roots when caFile is empty), TLS 1.2 or later: for
// a caller's own RoundTripper around it, passed with WithHTTPClient.
func NewTransport(caFile string) (*http.Transport, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if caFile == "" {
		return t, nil
	}
	roots, err := readCAFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("pdp: %w", err)
	}
	t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	return t, nil
}

func readCAFile(file string) (*x509.CertPool, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(raw) {
		return nil, fmt.Errorf("CA file %s: no PEM certificate in it", file)
	}
	return roots, nil
}

// trustCAFile gives c's HTTP client a transport that trusts c.caFile.
func (c *Client) trustCAFile() {
	h := *c.http
	c.http = &h
	base := http.DefaultTransport
	if h.Transport != nil {
		base = h.Transport
	}
	own, ok := base.(*http.Transport)
	if !ok {
		h.Transport = failing{errors.New("pdp: WithCAFile needs the HTTP client's transport to be an *http.Transport; build one with NewTransport")}
		return
	}
	roots, err := readCAFile(c.caFile)
	if err != nil {
		h.Transport = failing{err}
		return
	}
	t := own.Clone()
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{}
	}
	t.TLSClientConfig.RootCAs = roots
	if t.TLSClientConfig.MinVersion < tls.VersionTLS12 {
		t.TLSClientConfig.MinVersion = tls.VersionTLS12
	}
	h.Transport = t
}

// failing is a transport that cannot be built: every request fails, so
// no decision is ever taken from it.
type failing struct{ err error }

func (f failing) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, f.err
}
