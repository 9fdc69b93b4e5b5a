// Package decisionlog exports every decision as one JSON line in OPA's
// decision-log event format (decision_id, path, input, result,
// timestamp, bundles, labels, metrics), to a file or stdout, for the log
// pipeline an organisation already runs (Vector, Fluent Bit, Loki,
// Elastic).
//
// The export is not the audit trail: the trail is committed first (see
// Tee), and the log is written through a buffer flushed every second and
// on Close. A failed log write is reported and never changes an answer.
package decisionlog
