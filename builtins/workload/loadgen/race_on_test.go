//go:build race

package loadgen

// raceEnabled skips timing-accuracy tests: the race detector slows the
// generator several-fold, which is what those tests would then measure.
const raceEnabled = true
