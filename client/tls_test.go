package client_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/internal/testserver"
	"github.com/toolperm/pdp/internal/tlsserve"
	"github.com/toolperm/pdp/internal/tlsserve/testcert"
)

// tlsPDP is the real PDP served over TLS with a self-signed certificate;
// it returns the base URL and the certificate's file (its own CA).
func tlsPDP(t *testing.T) (string, string) {
	t.Helper()
	pdp := testserver.New(t)
	certFile, keyFile := testcert.New(t, "pdp").Write(t, t.TempDir(), "server")
	cert, err := tlsserve.Load(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: pdp.Handler}
	go func() { _ = tlsserve.Serve(srv, ln, cert) }()
	t.Cleanup(func() { srv.Close() })
	return "https://" + ln.Addr().String(), certFile
}

func decideOnce(c *client.Client) (client.Decision, error) {
	return c.Decide(context.Background(), client.DecideRequest{SessionID: "tls", Tool: "read_file", Args: map[string]any{"path": "go.mod"}, Cwd: "/w"}, false)
}

func TestCAFileTrustsTheServersCertificate(t *testing.T) {
	url, caFile := tlsPDP(t)
	d, err := decideOnce(client.New(url, client.WithCAFile(caFile)))
	if err != nil || d.Decision != client.Allow {
		t.Fatalf("over TLS with the CA file: %+v %v", d, err)
	}
	// With a caller's own transport, built by NewTransport.
	tr, err := client.NewTransport(caFile)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := decideOnce(client.New(url, client.WithHTTPClient(&http.Client{Transport: tr}))); err != nil || d.Decision != client.Allow {
		t.Fatalf("over TLS with NewTransport: %+v %v", d, err)
	}
}

func TestWithoutTheRightCAThereIsNoDecision(t *testing.T) {
	url, _ := tlsPDP(t)
	dir := t.TempDir()
	otherCA, _ := testcert.New(t, "another").Write(t, dir, "other")
	notPEM := filepath.Join(dir, "not.pem")
	writeFile(t, notPEM, "hello")
	cases := []struct {
		name string
		c    *client.Client
		want string
	}{
		{"the system's roots", client.New(url), "certificate"},
		{"another CA", client.New(url, client.WithCAFile(otherCA)), "certificate"},
		{"a missing CA file", client.New(url, client.WithCAFile(filepath.Join(dir, "missing.pem"))), "CA file"},
		{"a file without a certificate", client.New(url, client.WithCAFile(notPEM)), "no PEM certificate"},
		{"a transport that cannot take it", client.New(url, client.WithCAFile(otherCA), client.WithHTTPClient(&http.Client{Transport: roundTripper(http.DefaultTransport.RoundTrip)})), "*http.Transport"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := decideOnce(c.c)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %+v, %v; want an error about %q", d, err, c.want)
			}
			var api *client.Error
			if errors.As(err, &api) {
				t.Fatalf("an API answer, not a refused connection: %v", err)
			}
		})
	}
}

func TestCAFileKeepsTheTransportsOtherSettings(t *testing.T) {
	url, caFile := tlsPDP(t)
	own := http.DefaultTransport.(*http.Transport).Clone()
	own.TLSClientConfig = &tls.Config{ServerName: "localhost"}
	c := client.New(strings.Replace(url, "127.0.0.1", "localhost", 1), client.WithCAFile(caFile), client.WithHTTPClient(&http.Client{Transport: own}))
	if d, err := decideOnce(c); err != nil || d.Decision != client.Allow {
		t.Fatalf("%+v %v", d, err)
	}
	if own.TLSClientConfig.RootCAs != nil {
		t.Fatal("WithCAFile changed the caller's transport in place")
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
