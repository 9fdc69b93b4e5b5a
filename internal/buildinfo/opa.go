//go:build !hookonly

package buildinfo

import opaversion "github.com/open-policy-agent/opa/v1/version"

// opaVersion is the version of OPA linked in.
var opaVersion = opaversion.Version
