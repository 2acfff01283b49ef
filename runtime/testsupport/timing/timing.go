// Package timing marks the tests that must run without the race detector:
// what they check is a timing or a CPU cost that -race distorts (open-loop
// accuracy, coordinated omission, the load generator's CPU guard), or they
// are simulations, or brute-force checks of one goroutine's computation
// against an oracle, that -race makes ten times slower for nothing (it
// finds races between goroutines, and there is one). Under
// -race such a test skips with Phrase; .ci/test collects the tests that
// skipped with it in its race pass and runs exactly those again without
// -race, one package at a time, so no list of them is kept by hand.
package timing

import "testing"

// Race reports whether the test binary was built with -race.
const Race = race

// Phrase ends the skip message of a timing test under -race: .ci/test
// finds the tests to run in its timing step by it.
const Phrase = "a timing test: .ci/test runs it again without -race, one package at a time"

// Only skips t under the race detector, saying why; without -race it does
// nothing.
func Only(t testing.TB, why string) {
	t.Helper()
	if Race {
		t.Skipf("%s (%s)", why, Phrase)
	}
}
