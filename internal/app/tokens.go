package app

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/config"
)

var knownRoles = []httpapi.Role{httpapi.Dispatcher, httpapi.User, httpapi.Auditor, httpapi.Admin}

// Tokens turns the configured tokens into hashes; the tokens
// themselves are never kept.
func Tokens(cfg []config.Token) ([]httpapi.Token, error) {
	var out []httpapi.Token
	for i, t := range cfg {
		name := t.Name
		if name == "" {
			name = fmt.Sprintf("token %d", i+1)
		}
		var tok httpapi.Token
		tok.Name = name
		sources := 0
		for _, s := range []string{t.SHA256, t.Env, t.File} {
			if s != "" {
				sources++
			}
		}
		if sources != 1 {
			return nil, fmt.Errorf("auth: %s: give exactly one of sha256, env, file", name)
		}
		switch {
		case t.SHA256 != "":
			raw, err := hex.DecodeString(strings.TrimSpace(t.SHA256))
			if err != nil || len(raw) != sha256.Size {
				return nil, fmt.Errorf("auth: %s: sha256 must be 64 hex digits", name)
			}
			copy(tok.Hash[:], raw)
		case t.Env != "":
			v := os.Getenv(t.Env)
			if v == "" {
				return nil, fmt.Errorf("auth: %s: environment variable %s is empty", name, t.Env)
			}
			tok.Hash = sha256.Sum256([]byte(v))
		default:
			raw, err := os.ReadFile(t.File)
			if err != nil {
				return nil, fmt.Errorf("auth: %s: %w", name, err)
			}
			v := strings.TrimSpace(string(raw))
			if v == "" {
				return nil, fmt.Errorf("auth: %s: %s is empty", name, t.File)
			}
			tok.Hash = sha256.Sum256([]byte(v))
		}
		if len(t.Roles) == 0 {
			return nil, fmt.Errorf("auth: %s: no roles", name)
		}
		for _, r := range t.Roles {
			if !slices.Contains(knownRoles, httpapi.Role(r)) {
				return nil, fmt.Errorf("auth: %s: unknown role %q (want dispatcher, user, auditor, admin)", name, r)
			}
			tok.Roles = append(tok.Roles, httpapi.Role(r))
		}
		out = append(out, tok)
	}
	return out, nil
}
