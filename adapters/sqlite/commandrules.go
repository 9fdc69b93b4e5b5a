package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// storeCommandRules sets a session's command rules (nil: none).
func storeCommandRules(ctx context.Context, db execer, id string, rules map[string]string) error {
	if rules == nil {
		rules = map[string]string{}
	}
	b, err := json.Marshal(rules)
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `UPDATE sessions SET command_rules = ? WHERE id = ?`, string(b), id); err != nil {
		return fmt.Errorf("storing the command rules of %q: %w", id, err)
	}
	return nil
}

// readCommandRules reads a session's command rules; never nil.
func readCommandRules(ctx context.Context, db queryer, id string) (map[string]string, error) {
	var raw string
	if err := db.QueryRowContext(ctx, `SELECT command_rules FROM sessions WHERE id = ?`, id).Scan(&raw); err != nil {
		return nil, fmt.Errorf("reading the command rules of %q: %w", id, err)
	}
	rules := map[string]string{}
	if err := json.Unmarshal([]byte(raw), &rules); err != nil {
		return nil, fmt.Errorf("session %q has unreadable command rules: %w", id, err)
	}
	return rules, nil
}
