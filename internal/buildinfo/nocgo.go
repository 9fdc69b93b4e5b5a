//go:build !cgo

package buildinfo

const cgoEnabled = false
