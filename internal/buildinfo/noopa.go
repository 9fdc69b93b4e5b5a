//go:build hookonly

package buildinfo

// opaVersion is empty: the hook build (pdp-hook) links no OPA.
var opaVersion = ""
