// Package testcert makes certificates for tests of TLS, valid for
// localhost, 127.0.0.1 and ::1: self-signed ones, each its own CA (New),
// and ones a test CA issues with the validity a test needs (NewCA).
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Cert is a self-signed certificate and its key, as PEM.
type Cert struct {
	CertPEM, KeyPEM []byte
	// Serial tells certificates apart.
	Serial *big.Int
}

// New makes a certificate named name (its subject's common name).
func New(t testing.TB, name string) Cert {
	t.Helper()
	c, _, _ := issue(t, name, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour), nil, nil)
	return c
}

// CA is a certificate authority of a test: the certificates it issues
// are trusted by whoever trusts its own (CertPEM).
type CA struct {
	Cert
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewCA makes a CA named name, valid from an hour ago for a day.
func NewCA(t testing.TB, name string) CA {
	t.Helper()
	c, cert, key := issue(t, name, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour), nil, nil)
	return CA{Cert: c, cert: cert, key: key}
}

// Issue makes a certificate named name for localhost, 127.0.0.1 and ::1,
// signed by the CA and valid from notBefore to notAfter (either may be
// past: an expired certificate is a valid pair all the same).
func (ca CA) Issue(t testing.TB, name string, notBefore, notAfter time.Time) Cert {
	t.Helper()
	c, _, _ := issue(t, name, notBefore, notAfter, ca.cert, ca.key)
	return c
}

// issue makes a certificate signed by parent's key, or self-signed when
// parent is nil, and returns it with its parsed form and its key.
func issue(t testing.TB, name string, notBefore, notAfter time.Time, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (Cert, *x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  parent == nil,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	} else {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return Cert{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		Serial:  serial,
	}, cert, key
}

// Write writes the certificate and key as dir/NAME.crt and dir/NAME.key
// (replacing them by rename, as a rotation does) and returns their paths.
func (c Cert) Write(t testing.TB, dir, name string) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	writeByRename(t, certFile, c.CertPEM)
	writeByRename(t, keyFile, c.KeyPEM)
	return certFile, keyFile
}

func writeByRename(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
