//go:build !slowloop

package loadgen

// slowdown costs nothing: see slowdown_on.go.
func slowdown() {}
