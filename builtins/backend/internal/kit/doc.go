// Package kit holds the parts every backend kind builds its handle from.
//
// Kinds share these, so each is written once: a handle's methods bound as
// builtins with redacted errors (Methods), children's output in a bounded
// ring and followed by guards (LogRing, Follow, FollowFile), ready checks
// and commands (CheckReady, ReadyCheck, Argv), the limit arguments and the
// cgroup that enforces them (LimitArgs, LimitPid, ObserveGroup, OOMWatch),
// the run guards' glue (AddTarget, WatchMethod, WatchContainer), and the
// conversion of query arguments and results (ToGo, ToStarlark, Table), and
// a resource's own small files written whole (WriteOwn).
package kit
