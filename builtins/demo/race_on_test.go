//go:build race

package demo

// raceEnabled: the demo target re-executes this test binary, so under -race
// its SQLite (modernc, Go code) runs several times slower and a table scan
// outlasts a short timing test.
const raceEnabled = true
