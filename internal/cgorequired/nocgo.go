//go:build !cgo

package cgorequired

// The name is the message: the compiler prints it as "undefined: …".
var _ = pdp_needs_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler__see_docs_operations_md
