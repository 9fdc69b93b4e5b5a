package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/toolperm/pdp/internal/schema"
)

// migrations are applied in order, each once; never edit one that has
// shipped, add the next.
var migrations = []string{
	1: `
CREATE TABLE sessions (
	id                TEXT PRIMARY KEY,
	permission_level  TEXT NOT NULL DEFAULT 'READ_ONLY',
	mode              TEXT NOT NULL DEFAULT 'on-demand',
	execution_mode    TEXT NOT NULL DEFAULT 'LOCAL',
	workspace         TEXT NOT NULL DEFAULT '',
	rules             TEXT NOT NULL DEFAULT '{}',
	parent_session_id TEXT REFERENCES sessions(id),
	scope             TEXT,
	assessor_model    TEXT NOT NULL DEFAULT '',
	created_at        TEXT NOT NULL,
	updated_at        TEXT NOT NULL
);
CREATE INDEX sessions_parent ON sessions(parent_session_id);

CREATE TABLE grants (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id  TEXT NOT NULL REFERENCES sessions(id),
	capability  TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	decision_id TEXT,
	created_at  TEXT NOT NULL,
	UNIQUE (session_id, capability, fingerprint)
);

CREATE TABLE decisions (
	id             TEXT PRIMARY KEY,
	time           TEXT NOT NULL,
	session_id     TEXT NOT NULL,
	tool           TEXT NOT NULL DEFAULT '',
	capability     TEXT,
	args           TEXT NOT NULL DEFAULT '{}',
	cwd            TEXT NOT NULL DEFAULT '',
	fingerprint    TEXT,
	grantable      INTEGER NOT NULL DEFAULT 0,
	decision       TEXT NOT NULL,
	source         TEXT NOT NULL,
	rule           TEXT NOT NULL,
	reason         TEXT NOT NULL,
	danger_verdict TEXT,
	danger_by      TEXT,
	revision       TEXT NOT NULL DEFAULT '',
	latency_us     INTEGER NOT NULL DEFAULT 0,
	answer         TEXT,
	answer_channel TEXT,
	answered_at    TEXT,
	grant_id       INTEGER
);
CREATE INDEX decisions_session ON decisions(session_id, id);
CREATE INDEX decisions_decision ON decisions(decision, id);
`,
	2: `
CREATE TABLE access_events (
	id     INTEGER PRIMARY KEY AUTOINCREMENT,
	time   TEXT NOT NULL,
	method TEXT NOT NULL,
	route  TEXT NOT NULL,
	code   INTEGER NOT NULL,
	token  TEXT NOT NULL DEFAULT '',
	reason TEXT NOT NULL DEFAULT '',
	remote TEXT NOT NULL DEFAULT ''
);
`,
	3: `
ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT '';
`,
	// Times were RFC 3339 with trailing fraction zeros dropped, which do
	// not compare as text in time order; rewrite them with nine digits.
	4: fixedWidthTimes("decisions", "time") + fixedWidthTimes("decisions", "answered_at") +
		fixedWidthTimes("sessions", "created_at") + fixedWidthTimes("sessions", "updated_at") +
		fixedWidthTimes("grants", "created_at") + fixedWidthTimes("access_events", "time") +
		"CREATE INDEX IF NOT EXISTS decisions_time ON decisions(time);\n",
	// Every filter combination of GET /v1/decisions has an index that ends
	// in id, so a page is one range of one index walked newest first
	// (decisionsQuery); a source without a decision reads the three
	// decisions' ranges and merges them.
	5: `
CREATE INDEX IF NOT EXISTS decisions_session_decision ON decisions(session_id, decision, id);
CREATE INDEX IF NOT EXISTS decisions_source_decision ON decisions(source, decision, id);
CREATE INDEX IF NOT EXISTS decisions_session_source_decision ON decisions(session_id, source, decision, id);
`,
	// What each decision was judged on, for pdp replay; NULL for events
	// from before it (or over pdp.MaxRecordedBytes): not replayable.
	6: `ALTER TABLE decisions ADD COLUMN recorded BLOB;`,
	// The runtime's id of a call, to find its ask when the runtime reports
	// what became of it, and the token that reported it; the change log
	// the live feed reads (GET /v1/events), written in the transaction of
	// each ask, answer and level change.
	7: `
ALTER TABLE decisions ADD COLUMN tool_use_id TEXT;
ALTER TABLE decisions ADD COLUMN answered_by TEXT;
CREATE INDEX decisions_tool_use ON decisions(tool_use_id) WHERE tool_use_id IS NOT NULL;
CREATE TABLE changes (
	seq         INTEGER PRIMARY KEY AUTOINCREMENT,
	time        TEXT NOT NULL,
	kind        TEXT NOT NULL,
	session_id  TEXT NOT NULL,
	decision_id TEXT,
	session     TEXT
);
`,
	// Each session's layer of path rules (docs/policy.md).
	8: `ALTER TABLE sessions ADD COLUMN path_rules TEXT NOT NULL DEFAULT '{}';`,
	// Each session's command rules (docs/design.md §5); the parts of a
	// compound command, to grant each; project grants, shared by every
	// session of their owner with their workspace.
	9: `
ALTER TABLE sessions ADD COLUMN command_rules TEXT NOT NULL DEFAULT '{}';
ALTER TABLE decisions ADD COLUMN parts TEXT;
ALTER TABLE grants ADD COLUMN scope TEXT NOT NULL DEFAULT 'session';
ALTER TABLE grants ADD COLUMN workspace TEXT NOT NULL DEFAULT '';
ALTER TABLE grants ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX grants_project ON grants(workspace, owner) WHERE scope = 'project';
`,
}

// fixedWidthTimes rewrites a column of UTC times "YYYY-MM-DDTHH:MM:SS[.f]Z"
// to nine fraction digits; values already in that form stay as they are.
func fixedWidthTimes(table, column string) string {
	frac := "CASE WHEN substr(" + column + ", 20, 1) = '.' THEN substr(" + column + ", 21, length(" + column + ") - 21) ELSE '' END"
	return "UPDATE " + table + " SET " + column + " = substr(" + column + ", 1, 19) || '.' || substr(" + frac + " || '000000000', 1, 9) || 'Z'" +
		" WHERE " + column + " LIKE '____-__-__T__:__:__%Z';\n"
}

func migrate(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		return err
	}
	var current int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return err
	}
	return schema.Migrate(current, migrations, func(v int, migration string) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migration); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", v, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, v, formatTime(time.Now())); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
		return nil
	})
}
