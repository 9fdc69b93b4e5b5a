// Package policysource loads the policy the PDP serves — the built-in
// one, a directory of Rego and data.json, an OPA bundle tarball, or a
// bundle served over HTTP(S) — verifies bundle signatures with OPA's own
// bundle package, and keeps it current: a Watcher reloads on change
// (a file watch, or polling with ETag), compiles and tests the new policy
// and only then swaps it in; a policy that fails is never activated and
// the last good one keeps serving.
package policysource
