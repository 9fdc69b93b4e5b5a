package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// The cookies of sign-in hold no secret the server keeps: each is its
// JSON value and an HMAC-SHA256 of it under SignIn.Key, with an expiry
// inside the signed value. A forged, altered or expired cookie is no
// cookie. Nothing is kept per session on the server, so every replica
// that has the key reads them; signing out clears the browser's copy
// (a copy taken before stays good until its expiry).

const (
	// sessionCookie is a signed-in person's session.
	sessionCookie = "pdp_session"
	// flowCookie holds one sign-in's state, nonce and PKCE verifier
	// between /auth/login and /auth/callback.
	flowCookie = "pdp_signin"
)

// personSession is what the session cookie says: who signed in, the
// roles the provider's claim mapped to then, and until when.
type personSession struct {
	Subject string    `json:"sub"`
	Email   string    `json:"email,omitempty"`
	Roles   []Role    `json:"roles"`
	Expires time.Time `json:"exp"`
}

// signInFlow is one sign-in under way.
type signInFlow struct {
	State    string    `json:"state"`
	Nonce    string    `json:"nonce"`
	Verifier string    `json:"verifier"`
	Next     string    `json:"next"`
	Expires  time.Time `json:"exp"`
}

// seal signs v for the cookie named purpose: the name is signed with
// it, so one cookie's value is never taken for another's (a sign-in's
// flow cookie for a session).
func seal(key []byte, purpose string, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	body := base64.RawURLEncoding.EncodeToString(b)
	return body + "." + base64.RawURLEncoding.EncodeToString(mac(key, purpose, body)), nil
}

// unseal reads a value sealed for purpose into v; expires is read back
// from v.
func unseal(key []byte, purpose, sealed string, v any, expires func() time.Time, now time.Time) error {
	body, sig, ok := strings.Cut(sealed, ".")
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(got, mac(key, purpose, body)) {
		return errors.New("the cookie's signature is not good")
	}
	b, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return err
	}
	if !now.Before(expires()) {
		return errors.New("the cookie has expired")
	}
	return nil
}

func mac(key []byte, purpose, body string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(purpose + "\x00" + body))
	return m.Sum(nil)
}

// setCookie sets an HttpOnly, SameSite=Lax cookie, Secure unless the
// request came over plain HTTP to a loopback name (a browser keeps no
// Secure cookie from http://127.0.0.1). Lax, not Strict: the callback
// is a top-level GET from the provider's site, and a Strict cookie set
// there would not come back on the redirect to the console; a
// cross-site POST gets no Lax cookie, and the origin check refuses one
// that carries it anyway (csrf).
func setCookie(c echo.Context, name, value, path string, expires time.Time) {
	req := c.Request()
	c.SetCookie(&http.Cookie{Name: name, Value: value, Path: path, Expires: expires, MaxAge: max(1, int(time.Until(expires).Seconds())),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: c.IsTLS() || !IsLoopback(req.Host)})
}

func clearCookie(c echo.Context, name, path string) {
	c.SetCookie(&http.Cookie{Name: name, Value: "", Path: path, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: c.IsTLS() || !IsLoopback(c.Request().Host)})
}
