//go:build !slowloop

package h1wire

// slowdown costs nothing: see slowdown_on.go.
func slowdown() {}
