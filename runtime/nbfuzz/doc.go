// Package nbfuzz fuzzes the engine with whole notebooks (issue 25). Its
// inputs are cells cut from the project's own notebooks (notebooks/*.star),
// recombined and mutated, each parsed, run against a fresh cache under a
// time bound, run again from the cache, and rendered. A panic, a run past
// the bound or a crash of the process is a failure; an error in the notebook
// is not.
//
// Only builtins that start nothing outside the process are registered
// (display, metric, and the engine's own: file, param, memo, print): a
// cell that needs PostgreSQL or a workload target fails with an undefined
// name, which is one more input the engine must handle.
//
//	go test -run '^$' -fuzz '^FuzzNotebook$' -fuzztime 10s ./runtime/nbfuzz   # CI
//	bench/fuzz/run                                                         # 10 minutes
package nbfuzz
