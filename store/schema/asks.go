package schema

// PendingAsks indexes the asks nobody has answered, which the expiry
// sweep reads oldest first and GET /v1/decisions?pending=true lists:
// the index holds only them, so both cost the pending asks, not the
// trail.
const PendingAsks = `
CREATE INDEX decisions_pending ON decisions(time, id) WHERE decision = 'ask' AND answer IS NULL;
`

// AskWaiters is who waits on an ask now (GET /v1/decisions/{id}?wait=):
// a row per wait, from its start until its end at the latest, written
// by the server that holds the wait, which marks its end when the wait
// ends and deletes its rows when it shuts down, so every replica sees
// every replica's waiters. A row past its end (a server that died
// holding it) counts for nothing and the next wait deletes it.
const AskWaiters = `
CREATE TABLE ask_waiters (
	id          {serial},
	decision_id TEXT NOT NULL,
	waiter      TEXT NOT NULL,
	server      TEXT NOT NULL,
	since       {time} NOT NULL,
	ends        {time} NOT NULL
);
CREATE INDEX ask_waiters_decision ON ask_waiters(decision_id, waiter);
CREATE INDEX ask_waiters_server ON ask_waiters(server);
`

// NotifyClaims hands each notification to one replica: a sink's event
// is sent by the replica that first inserts its change log seq.
const NotifyClaims = `
CREATE TABLE notify_claims (
	sink       TEXT NOT NULL,
	seq        {int64} NOT NULL,
	server     TEXT NOT NULL,
	claimed_at {time} NOT NULL,
	PRIMARY KEY (sink, seq)
);
CREATE INDEX notify_claims_time ON notify_claims(claimed_at);
`

// AnswerTickets are the one-time answer links of notifications: the
// SHA-256 of each ticket, the one decision and answer it is for, the sink
// that sent it, when it expires and when it was used.
const AnswerTickets = `
CREATE TABLE answer_tickets (
	hash        TEXT PRIMARY KEY,
	decision_id TEXT NOT NULL,
	answer      TEXT NOT NULL,
	sink        TEXT NOT NULL,
	expires     {time} NOT NULL,
	used_at     {time}
);
CREATE INDEX answer_tickets_expires ON answer_tickets(expires);
`

// AnswerToken records who answered an ask: the name of the person's
// token (api.Answer.AnsweredBy). A column of its own: answered_by once
// named the runtime that reported an outcome, and is read by no one.
const AnswerToken = `ALTER TABLE decisions ADD COLUMN answer_token TEXT;`

// AnswerSubject records the subject (sub claim) of a person signed in
// with the organisation's OpenID provider who answered an ask
// (api.Answer.AnsweredBySubject); answer_token then holds their e-mail.
const AnswerSubject = `ALTER TABLE decisions ADD COLUMN answer_subject TEXT;`

// NotifyClaimLeases makes a notification's claim a lease: the replica
// that claims an event holds it until lease_until, renews it before
// each attempt and marks it done_at once the event is sent (or given
// up); an event whose lease ran out undone is claimed again by another
// replica, so one that dies between its claim and its delivery loses
// nothing. Claims from before (no lease) count as done.
const NotifyClaimLeases = `
ALTER TABLE notify_claims ADD COLUMN lease_until {time};
ALTER TABLE notify_claims ADD COLUMN done_at {time};
`
