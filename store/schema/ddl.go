package schema

import "strings"

// Types are one SQL dialect's words for the column types of the schema:
// the tables below say {time}, {serial}, {seq}, {int64}, {bool} and
// {false} where SQLite and PostgreSQL differ.
type Types struct {
	Time   string // a point in time
	Serial string // the id column of a table rows are appended to
	Seq    string // the change log's seq column
	Int64  string
	Bool   string
	False  string
}

// Render writes t's words into ddl.
func (t Types) Render(ddl string) string {
	return strings.NewReplacer("{time}", t.Time, "{serial}", t.Serial, "{seq}", t.Seq, "{int64}", t.Int64,
		"{bool}", t.Bool, "{false}", t.False).Replace(ddl)
}

// Sessions creates the sessions table as both backends first shipped
// it; more holds the columns ("\tname type,\n" each) a backend's first
// schema had before created_at.
func Sessions(more string) string {
	return `
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
` + more + `	created_at        {time} NOT NULL,
	updated_at        {time} NOT NULL
);
CREATE INDEX sessions_parent ON sessions(parent_session_id);
`
}

// Grants creates the grants table as both backends first shipped it.
const Grants = `
CREATE TABLE grants (
	id          {serial},
	session_id  TEXT NOT NULL REFERENCES sessions(id),
	capability  TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	decision_id TEXT,
	created_at  {time} NOT NULL,
	UNIQUE (session_id, capability, fingerprint)
);
`

// Decisions creates the decisions table, the audit trail, as both
// backends first shipped it, with the indexes of a session's and of a
// decision's events; more holds the columns (",\n\tname type" each) a
// backend's first schema had after grant_id.
func Decisions(more string) string {
	return `
CREATE TABLE decisions (
	id             TEXT PRIMARY KEY,
	time           {time} NOT NULL,
	session_id     TEXT NOT NULL,
	tool           TEXT NOT NULL DEFAULT '',
	capability     TEXT,
	args           TEXT NOT NULL DEFAULT '{}',
	cwd            TEXT NOT NULL DEFAULT '',
	fingerprint    TEXT,
	grantable      {bool} NOT NULL DEFAULT {false},
	decision       TEXT NOT NULL,
	source         TEXT NOT NULL,
	rule           TEXT NOT NULL,
	reason         TEXT NOT NULL,
	danger_verdict TEXT,
	danger_by      TEXT,
	revision       TEXT NOT NULL DEFAULT '',
	latency_us     {int64} NOT NULL DEFAULT 0,
	answer         TEXT,
	answer_channel TEXT,
	answered_at    {time},
	grant_id       {int64}` + more + `
);
CREATE INDEX decisions_session ON decisions(session_id, id);
CREATE INDEX decisions_decision ON decisions(decision, id);
`
}

// AccessEvents creates the log of refused requests.
const AccessEvents = `
CREATE TABLE access_events (
	id     {serial},
	time   {time} NOT NULL,
	method TEXT NOT NULL,
	route  TEXT NOT NULL,
	code   INTEGER NOT NULL,
	token  TEXT NOT NULL DEFAULT '',
	reason TEXT NOT NULL DEFAULT '',
	remote TEXT NOT NULL DEFAULT ''
);
`

// PathRules adds each session's layer of path rules (docs/policy.md).
const PathRules = `ALTER TABLE sessions ADD COLUMN path_rules TEXT NOT NULL DEFAULT '{}';`

// CallsAndChanges adds the runtime's id of a call, to find its ask when
// the runtime reports what became of it, and the token that reported it;
// and the change log the live feed reads (GET /v1/events), written in the
// transaction of each ask, answer and level change.
const CallsAndChanges = `
ALTER TABLE decisions ADD COLUMN tool_use_id TEXT;
ALTER TABLE decisions ADD COLUMN answered_by TEXT;
CREATE INDEX decisions_tool_use ON decisions(tool_use_id) WHERE tool_use_id IS NOT NULL;
CREATE TABLE changes (
	seq         {seq},
	time        {time} NOT NULL,
	kind        TEXT NOT NULL,
	session_id  TEXT NOT NULL,
	decision_id TEXT,
	session     TEXT
);
`

// CommandRulesAndProjects adds each session's command rules
// (docs/design.md §5); the parts of a compound command, to grant each;
// project grants, shared by every session of their owner with their
// workspace.
const CommandRulesAndProjects = `
ALTER TABLE sessions ADD COLUMN command_rules TEXT NOT NULL DEFAULT '{}';
ALTER TABLE decisions ADD COLUMN parts TEXT;
ALTER TABLE grants ADD COLUMN scope TEXT NOT NULL DEFAULT 'session';
ALTER TABLE grants ADD COLUMN workspace TEXT NOT NULL DEFAULT '';
ALTER TABLE grants ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX grants_project ON grants(workspace, owner) WHERE scope = 'project';
`

// Outcomes keeps what a runtime reports became of an ask apart from the
// person's answer: an outcome is a record of what the runtime did, never
// an answer, so the ask stays pending and a person may still answer it.
const Outcomes = `
ALTER TABLE decisions ADD COLUMN outcome TEXT;
ALTER TABLE decisions ADD COLUMN outcome_channel TEXT;
ALTER TABLE decisions ADD COLUMN outcome_at {time};
ALTER TABLE decisions ADD COLUMN outcome_by TEXT;
` + OutcomesFromAnswers

// OutcomesFromAnswers moves the outcomes recorded as answers before
// Outcomes (those naming the token that reported them, answered_by) to
// the outcome columns, and the asks they settled back to unanswered:
// no person answered them.
const OutcomesFromAnswers = `
UPDATE decisions SET outcome = answer, outcome_channel = answer_channel, outcome_at = answered_at, outcome_by = answered_by,
	answer = NULL, answer_channel = NULL, answered_at = NULL, answered_by = NULL
	WHERE answered_by IS NOT NULL;
`

// FlowLabels keeps the flow labels of each session tree on its root
// (docs/design.md §4, "Flow"): one row per label, the first call that
// set it; labels are only ever added. A decision's row keeps the labels
// its call carried (a JSON array; NULL for none), so an answer or an
// outcome that lets the call run adds them.
const FlowLabels = `
ALTER TABLE decisions ADD COLUMN labels TEXT;
CREATE TABLE session_labels (
	session_id  TEXT NOT NULL,
	label       TEXT NOT NULL,
	decision_id TEXT NOT NULL,
	set_by      TEXT NOT NULL,
	time        {time} NOT NULL,
	summary     TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (session_id, label)
);
`
