package tlsserve_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolperm/pdp/internal/tlsserve"
	"github.com/toolperm/pdp/internal/tlsserve/testcert"
)

// server serves "ok" over TLS with the certificate in dir/server.* and
// returns its address.
func server(t *testing.T, cert *tlsserve.Certificate) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })}
	go func() { _ = tlsserve.Serve(srv, ln, cert) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func trusting(certs ...testcert.Cert) *x509.CertPool {
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AppendCertsFromPEM(c.CertPEM)
	}
	return pool
}

// servedSerial is the serial of the certificate a new handshake with
// addr gets.
func servedSerial(t *testing.T, addr string, roots *x509.CertPool) *big.Int {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber
}

func TestARotatedCertificateIsServedWithoutDroppingConnections(t *testing.T) {
	dir := t.TempDir()
	first, second := testcert.New(t, "first"), testcert.New(t, "second")
	certFile, keyFile := first.Write(t, dir, "server")
	cert, err := tlsserve.Load(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	addr := server(t, cert)
	roots := trusting(first, second)

	// A kept-alive connection opened before the rotation.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	get := func() (reused bool) {
		t.Helper()
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", "https://"+addr+"/", nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if body, _ := io.ReadAll(resp.Body); string(body) != "ok" {
			t.Fatalf("answer %q", body)
		}
		return reused
	}
	get()
	if got := servedSerial(t, addr, roots); got.Cmp(first.Serial) != 0 {
		t.Fatalf("served %v before the rotation, want the first certificate %v", got, first.Serial)
	}

	second.Write(t, dir, "server")
	if changed, err := cert.Reload(); err != nil || !changed {
		t.Fatalf("reload: changed %v, %v", changed, err)
	}
	if got := servedSerial(t, addr, roots); got.Cmp(second.Serial) != 0 {
		t.Fatalf("a new connection got %v after the rotation, want the second certificate %v", got, second.Serial)
	}
	if !get() {
		t.Fatal("the connection opened before the rotation was not reused: it was dropped")
	}
	if changed, err := cert.Reload(); err != nil || changed {
		t.Fatalf("a reload of unchanged files: changed %v, %v", changed, err)
	}
}

func TestABrokenRotationKeepsTheCertificateBefore(t *testing.T) {
	dir := t.TempDir()
	first, other := testcert.New(t, "first"), testcert.New(t, "other")
	certFile, keyFile := first.Write(t, dir, "server")
	cert, err := tlsserve.Load(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	addr := server(t, cert)
	cases := map[string]func(){
		"garbage":              func() { os.WriteFile(certFile, []byte("not a certificate"), 0o600) },
		"a key of another one": func() { os.WriteFile(certFile, first.CertPEM, 0o600); os.WriteFile(keyFile, other.KeyPEM, 0o600) },
		"a missing key":        func() { os.Remove(keyFile) },
	}
	for name, breakIt := range cases {
		t.Run(name, func(t *testing.T) {
			breakIt()
			if changed, err := cert.Reload(); err == nil || changed {
				t.Fatalf("reload of broken files: changed %v, %v", changed, err)
			}
			if got := servedSerial(t, addr, trusting(first)); got.Cmp(first.Serial) != 0 {
				t.Fatalf("served %v, want the certificate before %v", got, first.Serial)
			}
			first.Write(t, dir, "server")
		})
	}
}

func TestSIGHUPReloads(t *testing.T) {
	// The test's own handler keeps a SIGHUP sent before Watch listens from
	// ending the process.
	keep := make(chan os.Signal, 8)
	signal.Notify(keep, syscall.SIGHUP)
	defer signal.Stop(keep)

	dir := t.TempDir()
	first, second := testcert.New(t, "first"), testcert.New(t, "second")
	certFile, keyFile := first.Write(t, dir, "server")
	cert, err := tlsserve.Load(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	addr := server(t, cert)
	// Rotated before Watch watches the files: only SIGHUP (the poll is an
	// hour) can pick it up.
	second.Write(t, dir, "server")
	reloaded := make(chan error, 16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cert.Watch(ctx, tlsserve.WatchOptions{Poll: time.Hour, Reloaded: func(changed bool, err error) {
		if changed || err != nil {
			reloaded <- err
		}
	}})
	deadline := time.After(30 * time.Second) // bounds a failure only
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case err := <-reloaded:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		case <-tick.C: // until Watch listens
			syscall.Kill(os.Getpid(), syscall.SIGHUP)
		case <-deadline:
			t.Fatal("no reload after SIGHUP")
		}
	}
	if got := servedSerial(t, addr, trusting(first, second)); got.Cmp(second.Serial) != 0 {
		t.Fatalf("served %v after SIGHUP, want the second certificate %v", got, second.Serial)
	}
}

func TestAFileChangeReloads(t *testing.T) {
	dir := t.TempDir()
	first, second := testcert.New(t, "first"), testcert.New(t, "second")
	certFile, keyFile := first.Write(t, dir, "server")
	cert, err := tlsserve.Load(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	addr := server(t, cert)
	reloaded := make(chan struct{}, 16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cert.Watch(ctx, tlsserve.WatchOptions{Poll: 100 * time.Millisecond, Reloaded: func(changed bool, err error) {
		if changed {
			reloaded <- struct{}{}
		}
	}})
	second.Write(t, dir, "server")
	select {
	case <-reloaded:
	case <-time.After(30 * time.Second): // bounds a failure only
		t.Fatal("the rotated files were not picked up")
	}
	if got := servedSerial(t, addr, trusting(first, second)); got.Cmp(second.Serial) != 0 {
		t.Fatalf("served %v after the change, want the second certificate %v", got, second.Serial)
	}
}

func TestOldProtocolVersionsAreRefused(t *testing.T) {
	c := testcert.New(t, "server")
	certFile, keyFile := c.Write(t, t.TempDir(), "server")
	cert, err := tlsserve.Load(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	addr := server(t, cert)
	for _, v := range []uint16{tls.VersionTLS10, tls.VersionTLS11} {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: trusting(c), MinVersion: v, MaxVersion: v})
		if err == nil {
			conn.Close()
			t.Fatalf("a %s handshake succeeded", tls.VersionName(v))
		}
		if !strings.Contains(err.Error(), "protocol version") {
			t.Errorf("%s: %v, want a protocol version alert", tls.VersionName(v), err)
		}
	}
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: trusting(c), MinVersion: v, MaxVersion: v})
		if err != nil {
			t.Fatalf("%s: %v", tls.VersionName(v), err)
		}
		conn.Close()
	}
}

func TestCheckSaysWhatIsMissing(t *testing.T) {
	cases := []struct {
		name             string
		s                tlsserve.Settings
		tokens, loopback bool
		want             []string // parts of the error; none: accepted
	}{
		{"tokens off loopback without TLS", tlsserve.Settings{}, true, false,
			[]string{"plaintext on 0.0.0.0:8181", "server.tls_cert_file (PDP_SERVER_TLS_CERT_FILE)", "server.tls_key_file (PDP_SERVER_TLS_KEY_FILE) are missing", "server.allow_plaintext: true (PDP_SERVER_ALLOW_PLAINTEXT=true)"}},
		{"a certificate without its key", tlsserve.Settings{CertFile: "c.pem"}, true, false,
			[]string{"server.tls_cert_file (PDP_SERVER_TLS_CERT_FILE) is set but server.tls_key_file (PDP_SERVER_TLS_KEY_FILE) is missing"}},
		{"a key without its certificate", tlsserve.Settings{KeyFile: "k.pem"}, false, true,
			[]string{"server.tls_key_file (PDP_SERVER_TLS_KEY_FILE) is set but server.tls_cert_file (PDP_SERVER_TLS_CERT_FILE) is missing"}},
		{"plaintext allowed", tlsserve.Settings{AllowPlaintext: true}, true, false, nil},
		{"TLS", tlsserve.Settings{CertFile: "c.pem", KeyFile: "k.pem"}, true, false, nil},
		{"loopback", tlsserve.Settings{}, true, true, nil},
		{"no tokens", tlsserve.Settings{}, false, false, nil}, // refused elsewhere: no access control
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.s.Check("0.0.0.0:8181", c.tokens, c.loopback)
			if len(c.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("want %q in %q", w, err)
				}
			}
		})
	}
}
