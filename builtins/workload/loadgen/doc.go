// Package loadgen is benchbook's load generator, with no Starlark in it. The
// workload module converts a notebook's arguments into a Spec and a Target,
// calls Run, and turns the Result into a Starlark value; agents and bench/
// programs can call it the same way (as vegeta's lib/ sits beside its
// commands).
//
//  1. A Spec is the loop's shape and timing: Clients (closed loop, each
//     client sends its next request when the last one returns, or, with
//     Think, when its user's think time after it has passed: think.go) or Rate
//     (open loop: a pacer fixes every request's intended start, and latency
//     is measured from it, so a stalled target shows in the tail instead of
//     being hidden: coordinated omission corrected).
//  2. A Target makes clients: h1wire.NewHTTPTarget (a lean HTTP/1.1 client
//     over raw keep-alive connections; its parser reads responses as
//     net/http does), pgwire.OpenSQL (a pgx pool with prepared statements,
//     and its own reader of the backend's messages) or mongowire.OpenMongo.
//  3. Run drives it: the closed loop as epoll loops of many connections
//     each where the target allows (plain HTTP, SQL on Linux; one per P
//     but one, as wrk -t and pgbench -j do), else a goroutine per client;
//     the open loop, for SQL and plain HTTP on Linux, as event loops of the same
//     kind that sleep until the next request is due and send every due
//     request on an idle connection (driveOpen), else as workers that
//     claim jobs from the schedule, sleep on a timerfd until each is due,
//     and send it.
//  4. Recorders take each outcome (a success, an error class from Classify,
//     a drop, or undecided after Ctrl-C) into HDR histograms, per worker and
//     per window, merged at the end into a Result whose counts add up to
//     Intended and whose warnings say what may make its figures less than
//     they seem (the generator the bottleneck, requests late or dropped).
//  5. A Result is the one shape of a run's figures (result.go): a local
//     run's, an agent's share (its JSON, histograms in HDR V2, is what
//     package fleet sends) and a fleet's merged run (Result.Merge). A new
//     figure is a field and a Merge line there, its measurement in the
//     engine, and its attribute in the workload module's run.go.
//
// The engine is this package; a wire protocol is a package that imports
// it, never the reverse: it implements Target (NewClient) and Client (Do,
// Abort, Close), Maker where a generator makes requests, and Tagged for a
// mix; a protocol that drives many connections from one goroutine is
// Multiplexed, its Loop built on LoopBase and LoopOps (drive_linux.go)
// and, for the open loop, OpenOps and OpenRunner (openpoll_linux.go). The
// error classes and Classify are the engine's, so a fault reads the same
// whichever protocol met it. Under it, package netpoll holds what the
// protocols' loops share: the epoll Poller, Detach and raw socket reads
// and writes (RawConn). Beside it: h1wire (HTTP/1.1), pgwire (PostgreSQL)
// and mongowire (MongoDB).
package loadgen
