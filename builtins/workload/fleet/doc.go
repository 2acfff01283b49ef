// Package fleet runs one workload on many agents and merges what they
// measure into one run. The merge is lossless. It holds no Starlark and
// links none (nor the engine): an agent runs package loadgen's generator, as
// a local workload does (AgentRun, the RunFunc of `benchbook agent`),
// reports loadgen's own Result, and the merged run is a loadgen.Result too,
// which the Starlark module turns into a run value with one call. RunLoad is
// the whole path for an http or sql load (Load); Run takes ready specs
// (tests run a synthetic load through it, package fleettest).
//
// The pipeline, as numbered steps:
//
//  1. Split: the load (clients or rate) is divided across the agents, each
//     with a disjoint range of request sequence numbers (Split).
//  2. Launch: a Launcher starts the agents — local processes (optionally
//     pinned to CPU sets), processes over OpenSSH, or the pods of a
//     Kubernetes Indexed Job (package fleet/kube).
//  3. Agree: each agent gets its spec; the coordinator estimates each
//     agent's clock offset by an NTP-style exchange over the agent's
//     stdin/stdout and sends one start instant, in the agent's own clock.
//  4. Watch: agents stream progress lines; one silent for too long is hung,
//     one whose stream ends without a result died or lost its connection.
//     Ctrl-C closes every agent's stdin (it stops and reports what it
//     measured) and kills what does not exit.
//  5. Merge: the agents' results merged (loadgen.Result.Merge: histograms
//     added, counts summed), windows aligned on the common start, one row
//     per agent (Merge). An agent that failed is named and the merged run
//     is marked incomplete, never presented as whole. The spec's observers
//     sample the server around the common window on this machine (RunLoad).
//
// The wire protocol is JSON lines (Message); an agent's last message is a
// Report holding its loadgen.Result in that type's own encoding, whose
// histograms travel in HdrHistogram's standard V2 compressed encoding,
// base64, as wrk2 and HdrHistogram's log tools exchange them.
package fleet
