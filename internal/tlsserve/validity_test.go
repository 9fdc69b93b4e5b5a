package tlsserve_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/internal/tlsserve"
	"github.com/toolperm/pdp/internal/tlsserve/testcert"
	"github.com/toolperm/pdp/metrics"
)

// logBuffer is a log that tests read while it is written.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// refusedCount is pdp_tls_reload_refused_total{reason} of m.
func refusedCount(t *testing.T, m *metrics.Metrics, reason string) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "pdp_tls_reload_refused_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return s.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// watched serves cert from certFile and keyFile, watched (the files'
// events, and a poll every 100 ms) with a log and the PDP's metrics; each
// reload attempt that changed something or failed is sent on the
// channel.
func watched(t *testing.T, certFile, keyFile string) (addr string, log *logBuffer, m *metrics.Metrics, reloads <-chan error) {
	t.Helper()
	cert, err := tlsserve.Load(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	addr = server(t, cert)
	log, m = &logBuffer{}, metrics.New()
	ch := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go cert.Watch(ctx, tlsserve.WatchOptions{Poll: 100 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(log, nil)), Observer: m,
		Reloaded: func(changed bool, err error) {
			if changed || err != nil {
				select {
				case ch <- err:
				default:
				}
			}
		}})
	return addr, log, m, ch
}

// A rotation to a certificate outside its validity — expired, or not
// valid yet, though a valid pair of the same CA — is refused like a
// broken pair: the certificate before keeps serving, so new handshakes
// (verified by a client that trusts the CA) still succeed; the refusal
// is logged with its reason and counted in pdp_tls_reload_refused_total.
func TestARotationToACertificateOutsideItsValidityKeepsTheOneBefore(t *testing.T) {
	ca := testcert.NewCA(t, "ca")
	now := time.Now()
	cases := []struct {
		reason string
		next   func() testcert.Cert
		broken string // written to the certificate file instead of next
	}{
		{reason: "expired", next: func() testcert.Cert { return ca.Issue(t, "expired", now.Add(-48*time.Hour), now.Add(-time.Hour)) }},
		{reason: "not_yet_valid", next: func() testcert.Cert { return ca.Issue(t, "later", now.Add(time.Hour), now.Add(48*time.Hour)) }},
		{reason: "invalid", broken: "not a certificate"},
	}
	for _, c := range cases {
		t.Run(c.reason, func(t *testing.T) {
			dir := t.TempDir()
			good := ca.Issue(t, "good", now.Add(-time.Hour), now.Add(30*24*time.Hour))
			certFile, keyFile := good.Write(t, dir, "server")
			addr, log, m, reloads := watched(t, certFile, keyFile)
			if got := servedSerial(t, addr, trusting(ca.Cert)); got.Cmp(good.Serial) != 0 {
				t.Fatalf("served %v, want the good certificate %v", got, good.Serial)
			}

			if c.broken != "" {
				if err := os.WriteFile(certFile, []byte(c.broken), 0o600); err != nil {
					t.Fatal(err)
				}
			} else {
				c.next().Write(t, dir, "server")
			}
			select {
			case err := <-reloads:
				if err == nil {
					t.Fatalf("the rotation to a certificate %s was taken", c.reason)
				}
				if got := tlsserve.RefusedReason(err); got != c.reason {
					t.Errorf("refused for %q (%v), want %q", got, err, c.reason)
				}
			case <-time.After(30 * time.Second): // bounds a failure only
				t.Fatal("the rotated files were not read")
			}
			// A client that verifies the chain and the validity, as every
			// client does, still gets a handshake: with the good one.
			if got := servedSerial(t, addr, trusting(ca.Cert)); got.Cmp(good.Serial) != 0 {
				t.Fatalf("served %v after the refused rotation, want the good certificate %v", got, good.Serial)
			}
			if n := refusedCount(t, m, c.reason); n < 1 {
				t.Errorf(`pdp_tls_reload_refused_total{reason=%q} is %v after the refusal`, c.reason, n)
			}
			if l := log.String(); !strings.Contains(l, "TLS certificate not reloaded; the one before keeps serving") || !strings.Contains(l, "reason="+c.reason) {
				t.Errorf("the log does not tell of the refusal and its reason:\n%s", l)
			}
		})
	}
}

// A certificate that expires within a day still serves: it is taken,
// with a warning.
func TestARotationToACertificateExpiringWithinADayIsTakenWithAWarning(t *testing.T) {
	ca := testcert.NewCA(t, "ca")
	now := time.Now()
	dir := t.TempDir()
	good := ca.Issue(t, "good", now.Add(-time.Hour), now.Add(30*24*time.Hour))
	soon := ca.Issue(t, "soon", now.Add(-time.Hour), now.Add(2*time.Hour))
	certFile, keyFile := good.Write(t, dir, "server")
	addr, log, m, reloads := watched(t, certFile, keyFile)

	soon.Write(t, dir, "server")
	select {
	case err := <-reloads:
		if err != nil {
			t.Fatalf("a certificate valid for two more hours was refused: %v", err)
		}
	case <-time.After(30 * time.Second): // bounds a failure only
		t.Fatal("the rotated files were not read")
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: trusting(ca.Cert), ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := conn.ConnectionState().PeerCertificates[0].SerialNumber; got.Cmp(soon.Serial) != 0 {
		t.Fatalf("served %v, want the new certificate %v", got, soon.Serial)
	}
	if l := log.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "the TLS certificate expires within a day") {
		t.Errorf("no warning of the near expiry:\n%s", l)
	}
	for _, reason := range []string{"expired", "not_yet_valid", "invalid"} {
		if n := refusedCount(t, m, reason); n != 0 {
			t.Errorf(`pdp_tls_reload_refused_total{reason=%q} is %v`, reason, n)
		}
	}
}
