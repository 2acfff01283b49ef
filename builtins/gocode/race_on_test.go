//go:build race

package gocode

// raceDetector is true in -race builds: interrupting a stuck interpreted
// call evaluates a stopper concurrently with yaegi's own bookkeeping, which
// the race detector reports inside yaegi (a known limitation, see
// interrupt.go).
const raceDetector = true
