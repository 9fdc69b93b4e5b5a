package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/adapters/oidc"
	"github.com/toolperm/pdp/client"
	"golang.org/x/oauth2"
)

// pdp login signs a person in with the organisation's OpenID provider by
// the device authorization grant (RFC 8628) and keeps the ID token, per
// PDP, in the user's configuration directory (0600); pdp asks and pdp
// answer send it when neither --token nor PDP_TOKEN gives a token.

func loginCommand() *cobra.Command {
	var t terminalChannel
	var issuer, clientID string
	cmd := &cobra.Command{
		Use:   "login [--url U] [--issuer URL --client-id ID]",
		Short: "Sign in with the organisation's OpenID provider (for pdp asks and pdp answer)",
		Long: `Signs you in with the OpenID Connect provider the PDP trusts (auth.oidc;
the PDP at --url says which, or give --issuer and --client-id) by the
device authorization grant: it prints a URL and a code, you open the URL
in any browser, sign in and enter the code, and it waits until you have.
The ID token is kept, for this PDP, in ` + "`" + `toolperm/tokens.json` + "`" + ` under your
configuration directory, readable by you only; pdp asks and pdp answer
send it when neither --token nor PDP_TOKEN is set, until it expires
(or, with a refresh token, renew it). pdp logout removes it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return login(ctx, t, issuer, clientID, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&t.url, "url", envOr("PDP_URL", "http://127.0.0.1:8181"), "the PDP's base URL (env PDP_URL)")
	cmd.Flags().StringVar(&issuer, "issuer", "", "the provider's issuer URL (default: as the PDP says)")
	cmd.Flags().StringVar(&clientID, "client-id", "", "the client id (default: as the PDP says)")
	caFileFlag(cmd, &t.caFile)
	return cmd
}

func logoutCommand() *cobra.Command {
	var url string
	cmd := &cobra.Command{
		Use:   "logout [--url U]",
		Short: "Forget the sign-in pdp login kept for a PDP",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			removed, path, err := forgetToken(url)
			if err != nil {
				return err
			}
			if !removed {
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "not signed in to %s\n", url)
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "signed out of %s (removed from %s)\n", url, path)
			return err
		},
	}
	cmd.Flags().StringVar(&url, "url", envOr("PDP_URL", "http://127.0.0.1:8181"), "the PDP's base URL (env PDP_URL)")
	return cmd
}

func login(ctx context.Context, t terminalChannel, issuer, clientID string, out io.Writer) error {
	// The sign-in is a bearer token for whoever receives it: it goes only
	// to a PDP over TLS (or on this machine), from a provider over TLS.
	if why := oidc.IssuerProblem(t.url); why != "" {
		return fmt.Errorf("--url %s: %s; pdp login sends your sign-in to this server", t.url, why)
	}
	scopes := []string{"openid", "email", "profile"}
	if issuer == "" || clientID == "" {
		p, err := providerOf(ctx, t)
		if err != nil {
			return err
		}
		issuer, clientID = or(issuer, p.Issuer), or(clientID, p.ClientID)
		if len(p.Scopes) > 0 {
			scopes = p.Scopes
		}
	}
	if why := oidc.IssuerProblem(issuer); why != "" {
		return fmt.Errorf("the provider %s: %s", printable(issuer), why)
	}
	fmt.Fprintf(out, "Signing in with %s (client %s) for the PDP at %s: the token will be sent to that PDP only.\n", printable(issuer), printable(clientID), t.url)
	p, err := oidc.Discover(ctx, oidc.Settings{Issuer: issuer, ClientID: clientID, Scopes: scopes})
	if err != nil {
		return err
	}
	conf := p.OAuth2()
	if conf.Endpoint.DeviceAuthURL == "" {
		return fmt.Errorf("the provider %s advertises no device_authorization_endpoint: pdp login needs the device authorization grant (RFC 8628); give pdp asks and pdp answer a token with --token or PDP_TOKEN instead", issuer)
	}
	conf.Endpoint.AuthStyle = oauth2.AuthStyleInParams // a public client: its id in the form, no secret
	grant, err := conf.DeviceAuth(ctx)
	if err != nil {
		return fmt.Errorf("the provider refused the device authorization request: %w", err)
	}
	// What the provider sends is printed as text: an escape sequence in
	// it could show one link and open another.
	fmt.Fprintf(out, "To sign in, open %s in a browser and enter the code %s\n", printable(grant.VerificationURI), printable(grant.UserCode))
	if grant.VerificationURIComplete != "" {
		fmt.Fprintf(out, "(or open %s)\n", printable(grant.VerificationURIComplete))
	}
	fmt.Fprintln(out, "Waiting for you to sign in…")
	tok, err := conf.DeviceAccessToken(ctx, grant)
	if err != nil {
		return fmt.Errorf("signing in: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return errors.New("the provider returned no ID token (is the openid scope allowed for this client?)")
	}
	person, err := p.Verify(ctx, raw)
	if err != nil {
		return fmt.Errorf("the provider's ID token: %w", err)
	}
	path, err := keepToken(t.url, storedToken{IDToken: raw, RefreshToken: tok.RefreshToken, Issuer: issuer, ClientID: clientID, TokenURL: conf.Endpoint.TokenURL})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Signed in to %s as %s; the token is kept in %s until %s\n", t.url, printable(or(person.Email, person.Subject)), path, person.Expiry.Local().Format(time.DateTime))
	return err
}

// signInProvider is the provider and client a PDP's people sign in with
// (GET /auth/me).
type signInProvider struct {
	Issuer   string   `json:"issuer"`
	ClientID string   `json:"client_id"`
	Scopes   []string `json:"scopes"`
}

// providerOf asks the PDP which provider and client people sign in with.
func providerOf(ctx context.Context, t terminalChannel) (signInProvider, error) {
	var me struct {
		Provider *signInProvider `json:"provider"`
	}
	hc := http.DefaultClient
	if t.caFile != "" {
		tr, err := client.NewTransport(t.caFile)
		if err != nil {
			return signInProvider{}, err
		}
		hc = &http.Client{Transport: tr}
	}
	req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimRight(t.url, "/")+"/auth/me", nil)
	if err == nil {
		var resp *http.Response
		if resp, err = hc.Do(req); err == nil {
			defer resp.Body.Close()
			err = json.NewDecoder(resp.Body).Decode(&me)
		}
	}
	if err != nil {
		return signInProvider{}, fmt.Errorf("asking the PDP at %s which provider it trusts: %w (or give --issuer and --client-id)", t.url, err)
	}
	if me.Provider == nil {
		return signInProvider{}, fmt.Errorf("the PDP at %s has no sign-in configured (auth.oidc)", t.url)
	}
	return *me.Provider, nil
}

// storedToken is a sign-in kept for one PDP.
type storedToken struct {
	IDToken      string `json:"id_token"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Issuer       string `json:"issuer"`
	ClientID     string `json:"client_id"`
	TokenURL     string `json:"token_url"`
}

// tokensFile is where pdp login keeps its tokens, by PDP URL.
func tokensFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no configuration directory to keep the token in: %w", err)
	}
	return filepath.Join(dir, "toolperm", "tokens.json"), nil
}

func readTokens() (map[string]storedToken, string, error) {
	path, err := tokensFile()
	if err != nil {
		return nil, "", err
	}
	all := map[string]storedToken{}
	raw, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return all, path, nil
	case err != nil:
		return nil, path, err
	}
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, path, fmt.Errorf("%s: %w", path, err)
	}
	return all, path, nil
}

// writeTokens replaces the file atomically, readable by its owner only.
func writeTokens(path string, all map[string]storedToken) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tokens-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func keepToken(url string, tok storedToken) (string, error) {
	all, path, err := readTokens()
	if err != nil {
		return path, err
	}
	all[strings.TrimRight(url, "/")] = tok
	return path, writeTokens(path, all)
}

func forgetToken(url string) (bool, string, error) {
	all, path, err := readTokens()
	if err != nil {
		return false, path, err
	}
	key := strings.TrimRight(url, "/")
	if _, ok := all[key]; !ok {
		return false, path, nil
	}
	delete(all, key)
	return true, path, writeTokens(path, all)
}

// signedInToken is the ID token pdp login kept for url, renewed with
// its refresh token when it has expired; "" when there is none (or it
// expired and cannot be renewed: errOut says so).
func signedInToken(ctx context.Context, url string, errOut io.Writer) string {
	all, path, err := readTokens()
	if err != nil {
		fmt.Fprintf(errOut, "pdp: reading the sign-in of pdp login: %v\n", err)
		return ""
	}
	key := strings.TrimRight(url, "/")
	tok, ok := all[key]
	if !ok {
		return ""
	}
	if time.Until(expiryOf(tok.IDToken)) > 30*time.Second {
		return tok.IDToken
	}
	if tok.RefreshToken != "" {
		conf := oauth2.Config{ClientID: tok.ClientID, Endpoint: oauth2.Endpoint{TokenURL: tok.TokenURL, AuthStyle: oauth2.AuthStyleInParams}}
		fresh, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Unix(1, 0)}).Token()
		if raw, _ := extra(fresh, "id_token"); err == nil && raw != "" {
			tok.IDToken = raw
			if fresh.RefreshToken != "" {
				tok.RefreshToken = fresh.RefreshToken
			}
			all[key] = tok
			if err := writeTokens(path, all); err != nil {
				fmt.Fprintf(errOut, "pdp: keeping the renewed token: %v\n", err)
			}
			return raw
		}
	}
	fmt.Fprintf(errOut, "pdp: the sign-in of pdp login to %s has expired: run pdp login again\n", url)
	return ""
}

func extra(t *oauth2.Token, key string) (string, bool) {
	if t == nil {
		return "", false
	}
	v, ok := t.Extra(key).(string)
	return v, ok
}

// expiryOf reads a JWT's exp without verifying it (the PDP verifies):
// only to know when to renew. The zero time for anything unreadable.
func expiryOf(jwt string) time.Time {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	if json.Unmarshal(raw, &claims) != nil {
		return time.Time{}
	}
	return time.Unix(claims.Exp, 0)
}

func or(v, fallback string) string {
	if v != "" {
		return v
	}
	return fallback
}
