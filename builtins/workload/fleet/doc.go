// Package fleet runs one workload on many agents and merges what they
// measured into one run, losslessly. It holds no generator and no Starlark:
// an agent runs the same load generator a local workload runs (through a
// RunFunc the caller supplies), and the Starlark module turns a Merged into
// a run value.
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
//  5. Merge: histograms added, windows aligned on the common start, counts
//     summed, one row per agent (Merge). An agent that failed is named and
//     the merged run is marked incomplete, never presented as whole.
//
// The wire protocol is JSON lines (Message); histograms travel in
// HdrHistogram's standard V2 compressed encoding, base64, as wrk2 and
// HdrHistogram's log tools exchange them.
package fleet
