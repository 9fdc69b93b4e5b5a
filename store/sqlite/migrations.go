package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/toolperm/pdp/store/schema"
	"github.com/toolperm/pdp/store/sqlstore"
)

// migrations are applied in order, each once; never edit one that has
// shipped, add the next.
var migrations = []string{
	1: types.Render(schema.Sessions("") + schema.Grants + schema.Decisions("")),
	2: types.Render(schema.AccessEvents),
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
	6:  `ALTER TABLE decisions ADD COLUMN recorded BLOB;`,
	7:  types.Render(schema.CallsAndChanges),
	8:  schema.PathRules,
	9:  schema.CommandRulesAndProjects,
	10: types.Render(schema.Outcomes),
	11: treeVersionTable,
	12: types.Render(schema.PendingAsks),
	13: types.Render(schema.AskWaiters),
	14: types.Render(schema.NotifyClaims),
	15: types.Render(schema.AnswerTickets),
	16: schema.AnswerToken,
	17: types.Render(schema.NotifyClaimLeases),
	// A label added to a tree changes what it holds (treeCache).
	18: types.Render(schema.FlowLabels) + `
CREATE TRIGGER tree_version_label_insert AFTER INSERT ON session_labels BEGIN UPDATE tree_version SET n = n + 1; END;
CREATE TRIGGER tree_version_label_delete AFTER DELETE ON session_labels BEGIN UPDATE tree_version SET n = n + 1; END;
`,
	19: schema.AnswerSubject,
}

// treeVersionTable counts the changes to what a session tree holds
// (treeCache): triggers move it in the transaction of every change to a
// stored session or a grant (and, since migration 18, a flow label), whoever commits it — this process, a
// maintenance command, the sqlite3 shell. Creating a session is not such
// a change (sqlstore.Store.Changed).
const treeVersionTable = `
CREATE TABLE tree_version (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
INSERT INTO tree_version (id, n) VALUES (1, 0);
CREATE TRIGGER tree_version_session_update AFTER UPDATE ON sessions BEGIN UPDATE tree_version SET n = n + 1; END;
CREATE TRIGGER tree_version_session_delete AFTER DELETE ON sessions BEGIN UPDATE tree_version SET n = n + 1; END;
CREATE TRIGGER tree_version_grant_insert AFTER INSERT ON grants BEGIN UPDATE tree_version SET n = n + 1; END;
CREATE TRIGGER tree_version_grant_update AFTER UPDATE ON grants BEGIN UPDATE tree_version SET n = n + 1; END;
CREATE TRIGGER tree_version_grant_delete AFTER DELETE ON grants BEGIN UPDATE tree_version SET n = n + 1; END;
`

// types are SQLite's words for the schema's column types: times are text
// (storerows.TimeText), appended rows take the next rowid.
var types = schema.Types{Time: "TEXT", Serial: "INTEGER PRIMARY KEY AUTOINCREMENT", Seq: "INTEGER PRIMARY KEY AUTOINCREMENT",
	Int64: "INTEGER", Bool: "INTEGER", False: "0"}

// fixedWidthTimes rewrites a column of UTC times "YYYY-MM-DDTHH:MM:SS[.f]Z"
// to nine fraction digits; values already in that form stay as they are.
func fixedWidthTimes(table, column string) string {
	frac := "CASE WHEN substr(" + column + ", 20, 1) = '.' THEN substr(" + column + ", 21, length(" + column + ") - 21) ELSE '' END"
	return "UPDATE " + table + " SET " + column + " = substr(" + column + ", 1, 19) || '.' || substr(" + frac + " || '000000000', 1, 9) || 'Z'" +
		" WHERE " + column + " LIKE '____-__-__T__:__:__%Z';\n"
}

func migrate(ctx context.Context, db *sql.DB) error {
	return schema.Apply(ctx, sqlstore.SQL(db), migrations, types.Time, formatTime(time.Now()))
}
