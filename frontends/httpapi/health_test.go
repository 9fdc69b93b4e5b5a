package httpapi_test

import (
	"testing"

	"github.com/toolperm/pdp/internal/buildinfo"
)

func TestHealthShowsTheBuildToAdminsOnly(t *testing.T) {
	s := newSecuredService(t)
	want := buildinfo.Read().String()
	for _, tc := range []struct {
		name, secret string
		sees         bool
	}{
		{"admin", "r-secret", true},
		{"dispatcher", "d-secret", false},
		{"user", "u-secret", false},
		{"auditor", "a-secret", false},
		{"no token", "", false},
		{"unknown token", "wrong", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := s.as(tc.secret).mustStatus(200, "GET", "/health", nil)
			got, has := out["version"]
			switch {
			case out["status"] != "ok":
				t.Fatalf("status %v", out)
			case tc.sees && got != want:
				t.Fatalf("version %v, want %q", got, want)
			case !tc.sees && has:
				t.Fatalf("a %s sees the build: %v", tc.name, got)
			}
		})
	}
}

func TestHealthShowsTheBuildWithoutTokens(t *testing.T) {
	out := startService(t).mustStatus(200, "GET", "/health", nil)
	if out["version"] != buildinfo.Read().String() {
		t.Fatalf("health without tokens: %v", out)
	}
}
