package main

import (
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolperm/pdp/internal/testserver"
	"github.com/toolperm/pdp/internal/tlsserve/testcert"
)

// tokensConfig has a dispatcher token (TEST_PDP_RUNTIME_TOKEN) and a user
// token (TEST_PDP_USER_TOKEN), plus extra lines under server:.
func tokensConfig(server string) string {
	return "server:\n" + server + "auth:\n  tokens:\n" +
		"    - name: runtime\n      roles: [dispatcher]\n      env: TEST_PDP_RUNTIME_TOKEN\n" +
		"    - name: person\n      roles: [user]\n      env: TEST_PDP_USER_TOKEN\n"
}

var tokenEnv = []string{"TEST_PDP_RUNTIME_TOKEN=d-secret", "TEST_PDP_USER_TOKEN=u-secret"}

// servedSerial is the serial of the certificate a new handshake gets.
func servedSerial(t *testing.T, base string, roots *x509.CertPool) *big.Int {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: roots, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber
}

func TestServeOverTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	dir := t.TempDir()
	first, second := testcert.New(t, "first"), testcert.New(t, "second")
	certFile, keyFile := first.Write(t, dir, "server")
	caFirst, _ := first.Write(t, dir, "ca-first")
	cfg := writeConfig(t, dir, tokensConfig("  tls_cert_file: "+certFile+"\n  tls_key_file: "+keyFile+"\n"))
	cmd := serveProcess(filepath.Join(dir, "pdp.db"), cfg, tokenEnv...)
	base, log := testserver.Process(t, cmd, 30*time.Second)
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("serving on %s, want https://", base)
	}

	t.Run("the terminal commands take --ca-file and PDP_CA_FILE", func(t *testing.T) {
		if r := runPDPProcess(t, "", "asks", "--url", base, "--token", "u-secret", "--ca-file", caFirst); r.status != 0 {
			t.Fatalf("pdp asks --ca-file:\n%s", r)
		}
		cmd := pdpProcess([]string{"asks", "--url", base, "--token", "u-secret"}, "PDP_CA_FILE="+caFirst)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pdp asks with PDP_CA_FILE: %v\n%s", err, out)
		}
		r := runPDPProcess(t, "", "level", "s1", "full", "--url", base, "--token", "u-secret")
		if r.status == 0 || !strings.Contains(r.stderr, "certificate") {
			t.Fatalf("without the CA file the system's roots do not know the certificate:\n%s", r)
		}
		r = runPDPProcess(t, "", "asks", "--url", base, "--ca-file", filepath.Join(dir, "missing.pem"))
		if r.status == 0 || !strings.Contains(r.stderr, "--ca-file") {
			t.Fatalf("a missing CA file:\n%s", r)
		}
	})
	t.Run("answers over TLS say to keep to TLS", func(t *testing.T) {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(first.CertPEM)
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
		resp, err := c.Get(base + "/health")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if !strings.HasPrefix(resp.Header.Get("Strict-Transport-Security"), "max-age=") {
			t.Fatalf("no Strict-Transport-Security over TLS: %v", resp.Header)
		}
	})
	t.Run("the hook takes --ca-file", func(t *testing.T) {
		out, _ := runHookProcess(t, payload(t, "read_inside.json"), "d-secret", "--url", base, "--ca-file", caFirst)
		if got := hookDecision(t, out); got != "allow" {
			t.Fatalf("the hook over TLS: %s\n%s", got, out)
		}
		out, _ = runHookProcess(t, payload(t, "read_inside.json"), "d-secret", "--url", base)
		if got := hookDecision(t, out); got != "deny" || !strings.Contains(out, "certificate") {
			t.Fatalf("the hook without the CA file must deny: %s", out)
		}
	})
	t.Run("the MCP proxy takes --ca-file", func(t *testing.T) {
		r := runPDPProcess(t, "", "mcp-proxy", "--url", base, "--session", "s", "--name", "files", "--ca-file", filepath.Join(dir, "missing.pem"), "--", "true")
		if r.status == 0 || !strings.Contains(r.stderr, "--ca-file") {
			t.Fatalf("a missing CA file:\n%s", r)
		}
	})
	t.Run("SIGHUP reloads a rotated certificate", func(t *testing.T) {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(first.CertPEM)
		roots.AppendCertsFromPEM(second.CertPEM)
		if got := servedSerial(t, base, roots); got.Cmp(first.Serial) != 0 {
			t.Fatalf("served %v, want the first certificate", got)
		}
		second.Write(t, dir, "server")
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		// The log says when the new certificate serves (the file watch may
		// say it first); the wait bounds a failure only.
		for deadline := time.Now().Add(30 * time.Second); !strings.Contains(log.String(), "TLS certificate reloaded"); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no reload logged:\n%s", log)
			}
		}
		if got := servedSerial(t, base, roots); got.Cmp(second.Serial) != 0 {
			t.Fatalf("served %v after the rotation, want the second certificate %v", got, second.Serial)
		}
		if r := runPDPProcess(t, "", "asks", "--url", base, "--token", "u-secret", "--ca-file", caFirst); r.status == 0 {
			t.Fatalf("the first certificate's CA still trusted after the rotation:\n%s", r)
		}
	})
}

func TestServeRefusesTokensInPlaintextOffLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	dir := t.TempDir()
	cfg := writeConfig(t, dir, tokensConfig(""))
	refused := pdpProcess([]string{"serve", "--addr", "0.0.0.0:0", "--db", filepath.Join(dir, "pdp.db"), "--config", cfg}, tokenEnv...)
	out, err := refused.CombinedOutput()
	for _, want := range []string{"plaintext", "server.tls_cert_file (PDP_SERVER_TLS_CERT_FILE)", "server.tls_key_file (PDP_SERVER_TLS_KEY_FILE) are missing", "PDP_SERVER_ALLOW_PLAINTEXT=true"} {
		if err == nil || !strings.Contains(string(out), want) {
			t.Fatalf("serve with tokens on 0.0.0.0 without TLS: %v, want %q in:\n%s", err, want, out)
		}
	}
	allowed := pdpProcess([]string{"serve", "--addr", "0.0.0.0:0", "--db", filepath.Join(dir, "pdp.db"), "--config", cfg}, append(tokenEnv, "PDP_SERVER_ALLOW_PLAINTEXT=true")...)
	if base := startCmd(t, allowed); !strings.HasPrefix(base, "http://") {
		t.Fatalf("serving on %s", base)
	}
	half := writeConfig(t, t.TempDir(), tokensConfig("  tls_cert_file: /etc/pdp/tls.crt\n"))
	out, err = pdpProcess([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "pdp.db"), "--config", half}, tokenEnv...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "server.tls_key_file (PDP_SERVER_TLS_KEY_FILE) is missing") {
		t.Fatalf("a certificate without its key: %v\n%s", err, out)
	}
}

// TestTheFirstTryWithTLSWorksOnOneMachine runs docs/operations.md's
// "first try" as written: its openssl command, serve with the two
// variables on loopback, and pdp asks trusting the certificate.
func TestTheFirstTryWithTLSWorksOnOneMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("no openssl")
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	at := strings.Index(text, "A self-signed certificate for a first try, on one machine")
	if at < 0 {
		t.Fatal("docs/operations.md has no first try with TLS")
	}
	block := text[at:]
	block = block[strings.Index(block, "```sh\n")+len("```sh\n"):]
	block = block[:strings.Index(block, "```")]
	var openssl string
	for _, line := range strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n") {
		if strings.HasPrefix(line, "openssl req") {
			openssl = line
		}
		if strings.Contains(line, "pdp serve") && !strings.Contains(line, "PDP_SERVER_TLS_CERT_FILE=tls.crt PDP_SERVER_TLS_KEY_FILE=tls.key") {
			t.Fatalf("the documented serve line changed; update this test: %q", line)
		}
	}
	if openssl == "" {
		t.Fatalf("no openssl command in the block:\n%s", block)
	}
	dir := t.TempDir()
	gen := exec.Command("sh", "-c", openssl)
	gen.Dir = dir
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", openssl, err, out)
	}
	cmd := pdpProcess([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "pdp.db")},
		"PDP_SERVER_TLS_CERT_FILE=tls.crt", "PDP_SERVER_TLS_KEY_FILE=tls.key")
	cmd.Dir = dir
	base, _ := testserver.Process(t, cmd, 30*time.Second)
	if !strings.HasPrefix(base, "https://127.0.0.1:") {
		t.Fatalf("serving on %s, want https on loopback", base)
	}
	if r := runPDPProcess(t, dir, "asks", "--url", base, "--ca-file", "tls.crt"); r.status != 0 {
		t.Fatalf("pdp asks --ca-file tls.crt, as documented:\n%s", r)
	}
}
