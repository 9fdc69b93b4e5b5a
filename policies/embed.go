// Package policies holds the built-in policy: the Rego of the decision
// chain and its default data. The service and the CLI use this copy when
// no other policy is configured; security teams edit the files beside it.
package policies

import "embed"

// FS holds the built-in policy files.
//
//go:embed *.rego data.json
var FS embed.FS
