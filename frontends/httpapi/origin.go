package httpapi

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
)

// sameOrigin keeps web pages on other sites away from the API: a request
// a browser sends from another origin is refused, and without tokens
// (where the network is the only protection) so is one addressed to a
// host name that is not loopback (DNS rebinding). The console may not be
// framed by another site.
func (s *Server) sameOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		if c.IsTLS() {
			// A browser that has seen the console over TLS never asks
			// for it over plain HTTP, where a page could be injected.
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		req := c.Request()
		if origin := req.Header.Get("Origin"); origin != "" {
			u, err := url.Parse(origin)
			if err != nil || u.Host != req.Host {
				s.refuse(c, http.StatusForbidden, "", "cross origin")
				return fail(http.StatusForbidden, "cross_origin", "requests from another origin (%s) are refused", origin)
			}
		}
		if s.open() && !IsLoopback(req.Host) {
			s.refuse(c, http.StatusForbidden, "", "not loopback")
			return fail(http.StatusForbidden, "not_loopback", "without access tokens the API answers loopback host names only, not %q", req.Host)
		}
		return next(c)
	}
}

// IsLoopback reports whether a host, or HOST:PORT (a Host header, a
// listen address), names this machine's loopback only.
func IsLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
