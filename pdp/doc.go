// Package pdp is the core of the decision point: the domain types
// (Request, Session, Decision), the Engine that evaluates the compiled
// Rego policy with an embedded OPA, and the decide pipeline that feeds the
// policy the facts it asks for. It holds no HTTP and no SQL: the service,
// the CLI and tests build the same Engine from different Components.
package pdp
