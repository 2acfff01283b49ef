//go:build race

package stats

// raceEnabled skips the simulations: they are pure arithmetic (nothing for
// the race detector to find) and it makes them ten times slower. The
// README's second test command runs them without -race.
const raceEnabled = true
