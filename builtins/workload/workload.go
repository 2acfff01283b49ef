// Package workload is the Starlark module that drives load and measures it.
// It only converts arguments and values: the load generator itself is
// package loadgen.
//
//	workload.http(url, method = "GET", headers = {}, body = None, request = None,
//	              insecure = False, requests = None, seed = 0,
//	              clients = N | users = N, think = "1s" | "exp(1s)" | rate = R,
//	              arrival = "constant" | "poisson",
//	              duration, warmup = "1s" | "auto", timeout = "5s", max_inflight = auto,
//	              window = "1s", tick = "auto", observe = [], label = "", profile = False, profile_hz = 499) -> run
//	workload.sql(db, query = "..." | queries = [...] | {tag: sql}, args = None,
//	             requests = None, seed = 0,
//	             clients = N | rate = R, arrival, duration, warmup = "1s" | "auto",
//	             timeout = "5s", max_inflight = auto, window = "1s", tick = "auto",
//	             observe = [], label = "", profile = False, profile_hz = 499) -> run
//	workload.mongo(target, op = "find" | "insert" | "update" | "aggregate" | "bulk",
//	               collection, db = "", request = {} | func(seq) -> {} | gocode func,
//	               requests = None, seed = 0,
//	               clients = N | rate = R, arrival, duration, warmup = "1s" | "auto",
//	               timeout = "5s", max_inflight = auto, window = "1s", tick = "auto",
//	               observe = [], label = "", profile = False, profile_hz = 499) -> run
//	    target: a mongodb:// URI (its path names the database) or a
//	    backend.mongo handle; request: the op's arguments (find: filter,
//	    projection, sort, limit; insert: document or documents; update:
//	    filter, update, upsert, many; aggregate: pipeline; bulk: writes,
//	    ordered), the same every request or from a generator per request.
//	workload.concurrent({name: fn, ...}, duration = None, warmup = "1s", window = "1s",
//	                    observe = [], label = "") -> scenarios
//	    each fn calls one workload.http, sql or mongo, which joins the group:
//	    every scenario starts at one instant, through one warm-up and one
//	    window (concurrent.go); a dict of runs by name, .all the merged run.
//	workload.agents(local = N | ssh = [hosts] | kubernetes = {...}) -> fleet
//	workload.exec(cmd, runs = 10, warmup = 1, timeout = None, observe = [], label = "",
//	              profile = False, profile_hz = 499) -> run
//
// requests = [{...}, ...] is a mix: each request one of the entries, drawn
// by weight from a seeded stream, counted under the entry's tag; http's
// entries take url (a path, a same-host URL or fn(seq)), method, body,
// headers, tag and weight; sql's sql, args, tag and weight; mongo's op,
// collection, request, tag and weight (mix.go). A generator may name each
// request's tag instead: http request = fn returning (path, tag) or a dict,
// sql args = fn returning {"args": [...], "tag": t}, a "tag" key in a mongo
// request. run.by_tag[tag] is then each tag's run (bytag.go), and a metric
// name reads it with brackets: compare(exp, metric = "p99[read]").
//
// profile = True samples the run's targets on-CPU over its measured window
// (the targets its traffic reaches and those observe lists; for exec, the
// command it runs), profile = [handle or pid, ...] the ones given: the run
// then has run.profile (profile.go); profile_hz is perf's rate in samples
// per CPU-second (1..5000).
//
// http and sql take agents = fleet: the load then comes from the fleet's
// agents (see Fleet and package fleet), merged into one run.
//
// tick (open loop) wakes the generator once per tick to send what is due,
// as wrk2 does every 1 ms: less CPU per request; a request waits up to a
// tick past its intended start, and its latency, counted from it, shows it.
// tick = 0 sends each request at its intended start; "auto" (the default)
// does so up to 2,500 req/s per event loop and ticks every 400 µs above
// (loadgen.AutoTick says why).
// max_inflight bounds open-loop concurrency (default: 100 ms of arrivals,
// 16..1000; for sql at most 64, as each slot is a server connection).
// Durations are strings ("30s", "500ms") or numbers of seconds, read by
// starval.Duration as in every builtin. With
// clients the loop is closed (each client sends its next request when the
// last one returns); with users (http, sql and mongo alike) it is closed
// too, each user waiting its think time between the outcome of one request
// and the start of the next: think = "1s" constant, "exp(1s)" exponential
// with that mean, seeded (users.go); with rate it is open: a pacer fixes every request's
// intended start and latency is measured from it, so a stalled target
// shows in the tail instead of being hidden (coordinated omission).
//
// Every builtin returns a run (Run, run.go; its attributes are the table
// in fields.go): count + sum(errors) + dropped + undecided == intended,
// always; p(q) and hist count failed and dropped requests as lower bounds
// (time to failure or give-up), ok_p(q) the successes alone.
//
// The rooms: this package only converts arguments and values. The load
// generator and a run's figures (loadgen.Result, with its wire encoding and
// Merge) are package loadgen; running a load on agents and merging their
// runs is package fleet (fleet.RunLoad), which links no Starlark. A local
// run and a fleet run both become a Run through one call, newRun.
package workload

import (
	_ "embed"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/profile/starprofile"
	"github.com/benchbook/benchbook/builtins/internal/runattrs"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
)

// Options are what the host decides of the workload module.
type Options struct {
	// Kubernetes makes the launcher of a kubernetes fleet; nil (a
	// benchbook built without -tags kubernetes: client-go adds 36 MB to
	// the binary and 20 MB to every command's memory, and SSH fleets copy
	// the binary to every host) makes workload.agents(kubernetes = ...)
	// fail saying so.
	Kubernetes KubernetesLauncher
}

// KubernetesLauncher makes the launcher of a kubernetes fleet from its
// options, its node selector and how long the run lasts.
type KubernetesLauncher func(opts, selector map[string]string, run time.Duration) (fleet.Launcher, error)

// Module is the workload module, and the decoders of the runs, histograms,
// fleets and profiles that cells store.
func Module(o Options) runtime.Module {
	return runtime.Module{
		Name: "workload",
		Globals: starlark.StringDict{"workload": &starlarkstruct.Module{
			Name: "workload",
			Members: starlark.StringDict{
				"http":       starlark.NewBuiltin("workload.http", httpBuiltin),
				"sql":        starlark.NewBuiltin("workload.sql", sqlBuiltin),
				"exec":       starlark.NewBuiltin("workload.exec", execBuiltin),
				"mongo":      starlark.NewBuiltin("workload.mongo", mongoBuiltin),
				"agents":     starlark.NewBuiltin("workload.agents", agentsBuiltin(o.Kubernetes)),
				"concurrent": starlark.NewBuiltin("workload.concurrent", concurrentBuiltin),
			},
		}},
		Decoders: codec.Types{
			"run":       decodeRun,
			"histogram": decodeHistogram,
			"fleet":     decodeFleet(o.Kubernetes),
			"profile":   starprofile.DecodeProfile,
			"scenarios": decodeScenarios,
		},
		Docs: docs(),
	}
}

// reference is the module's reference; docs completes it with the table
// of run attributes, made from the one table a run answers from (fields.go)
// and the observers' list, so the reference cannot drift from a run.
//
//go:embed reference.md
var reference string

var docs = sync.OnceValue(func() string {
	return strings.Replace(reference, runAttrsMark, runattrs.Markdown(RunAttrs()), 1)
})

// runAttrsMark is where reference.md takes the table.
const runAttrsMark = "<!-- run attributes -->\n"

// loadArgs are the arguments http and sql share, as given.
type loadArgs struct {
	clients     starlark.Value
	users       starlark.Value // closed loop of users with think time (users.go)
	think       thinkArg
	rate        starlark.Value
	arrival     string
	duration    starval.PositiveDuration // 0: not given
	warmup      warmupArg                // a duration, or "auto" (settle.go)
	timeout     starval.PositiveDuration
	window      starval.PositiveDuration
	maxInflight starlark.Value
	tick        tickArg
	observe     *starlark.List
	label       string
	agents      *Fleet          // nil: this process generates the load
	profile     profileArg      // profile = True or [targets] (profile.go)
	given       map[string]bool // the keyword arguments the call gave (note)
}

// note records which keyword arguments the call gave: a scenario of
// workload.concurrent takes the group's warm-up and window where it gave
// none.
func (a *loadArgs) note(kwargs []starlark.Tuple) *loadArgs {
	a.given = map[string]bool{}
	for _, kv := range kwargs {
		if k, ok := starlark.AsString(kv[0]); ok {
			a.given[k] = true
		}
	}
	return a
}

func newLoadArgs() *loadArgs {
	return &loadArgs{arrival: "constant", clients: starlark.None, users: starlark.None, rate: starlark.None, tick: tickArg{auto: true},
		warmup: warmupArg{d: time.Second}, timeout: starval.PositiveDuration(5 * time.Second),
		window: starval.PositiveDuration(time.Second), maxInflight: starlark.None}
}

// pairs lists the shared keyword arguments for starlark.UnpackArgs.
func (a *loadArgs) pairs() []any {
	return []any{"clients?", &a.clients, "users?", &a.users, "think?", &a.think, "rate?", &a.rate, "arrival?", &a.arrival,
		"duration??", &a.duration, "warmup?", &a.warmup, "timeout?", &a.timeout,
		"window?", &a.window, "max_inflight?", &a.maxInflight, "tick?", &a.tick, "observe?", &a.observe,
		"label?", &a.label, "agents?", &a.agents, "profile?", &a.profile, "profile_hz?", &a.profile.hz}
}

// spec checks the shared arguments and turns them into a loadgen.Spec.
func (a *loadArgs) spec(name string, th *starlark.Thread) (loadgen.Spec, error) {
	var s loadgen.Spec
	var err error
	if a.duration == 0 && collecting(th) == nil {
		return s, fmt.Errorf("%s: duration is required", name)
	}
	s.Duration, s.Warmup = time.Duration(a.duration), a.warmup.d
	if a.warmup.auto && a.agents != nil {
		return s, fmt.Errorf(`%s: warmup = "auto" is not supported with agents: give a duration`, name)
	}
	s.Timeout, s.Window = time.Duration(a.timeout), time.Duration(a.window)
	if s.Duration/s.Window > maxWindows {
		return s, fmt.Errorf("%s: window: %s windows of %s is more than %d per run", name, s.Duration, s.Window, maxWindows)
	}
	if err := a.loopShape(name, &s); err != nil {
		return s, err
	}
	if s.Observers, err = observers(name, a.observe); err != nil {
		return s, err
	}
	s.Observers = withBox(th, s.Observers, a.observe)
	s.Label, s.Step = a.label, runtime.Step(th)
	s.Progress = runtime.Stderr(th)
	s.Terminal = runtime.IsTerminal(s.Progress)
	return s, nil
}

// Bounds that keep a typo from exhausting memory or the machine.
const (
	maxWindows = 100_000
	maxRate    = 1_000_000
)

// loopShape sets closed loop (clients) or open loop (rate) and its bounds.
func (a *loadArgs) loopShape(name string, s *loadgen.Spec) error {
	if users, err := a.usersShape(name, s); users || err != nil {
		return err
	}
	hasClients, hasRate := a.clients != starlark.None, a.rate != starlark.None
	switch {
	case hasClients && hasRate:
		return fmt.Errorf("%s: give clients (closed loop) or rate (open loop), not both", name)
	case !hasClients && !hasRate:
		return fmt.Errorf("%s: one of clients or users (closed loop) or rate (open loop) is required", name)
	case hasClients:
		n, err := starlark.AsInt32(a.clients)
		if err != nil || n <= 0 {
			return fmt.Errorf("%s: clients must be an int > 0, got %s", name, a.clients)
		}
		s.Clients = n
		if a.tick.given {
			return fmt.Errorf("%s: tick applies to an open loop (rate), not to clients", name)
		}
		return nil
	}
	rate, ok := starlark.AsFloat(a.rate)
	if !ok || !(rate > 0) || math.IsInf(rate, 0) {
		return fmt.Errorf("%s: rate must be > 0, got %s", name, a.rate)
	}
	if rate > maxRate {
		return fmt.Errorf("%s: rate must be at most %d req/s, got %s", name, maxRate, a.rate)
	}
	if a.arrival != "constant" && a.arrival != "poisson" {
		return fmt.Errorf("%s: arrival must be \"constant\" or \"poisson\", got %q", name, a.arrival)
	}
	s.Rate, s.Arrival = rate, a.arrival
	if s.Tick, s.TickAuto = a.tick.d, a.tick.auto; s.Tick > time.Second {
		return fmt.Errorf("%s: tick must be at most 1s, got %s", name, s.Tick)
	}
	return a.inflight(name, s)
}

// tickArg is the tick argument: a duration, or "auto" (the default), which
// lets loadgen.AutoTick choose from the rate.
type tickArg struct {
	d     time.Duration
	auto  bool
	given bool // in the call, not the default
}

func (t *tickArg) Unpack(v starlark.Value) error {
	t.given = true
	if s, ok := v.(starlark.String); ok && s == "auto" {
		t.auto = true
		return nil
	}
	var d starval.Duration
	if err := d.Unpack(v); err != nil {
		if s, ok := v.(starlark.String); ok {
			return fmt.Errorf(`malformed tick %s (want "auto", 0 or a duration such as "200us")`, s)
		}
		return err
	}
	t.d, t.auto = time.Duration(d), false
	return nil
}

// inflight bounds open-loop concurrency. The default covers 100 ms of
// arrivals (16..1000): a stalled target then backs requests up in the
// pacer (counted late, latency still from the intended start) instead of
// opening a connection per request, which would make the catch-up after
// the stall cost more than the stall.
func (a *loadArgs) inflight(name string, s *loadgen.Spec) error {
	if a.maxInflight == starlark.None {
		s.MaxInflight = int(min(max(math.Ceil(s.Rate*0.1), 16), 1000))
		return nil
	}
	n, err := starlark.AsInt32(a.maxInflight)
	if err != nil || n <= 0 {
		return fmt.Errorf("%s: max_inflight must be an int > 0, got %s", name, a.maxInflight)
	}
	s.MaxInflight = n
	return nil
}

// Observer is a server-side source sampled around the measurement window,
// as a Starlark value: what observe = [...] takes (a cluster, a process).
type Observer interface {
	starlark.Value
	loadgen.Observer
}

func observers(name string, l *starlark.List) ([]loadgen.Observer, error) {
	if l == nil {
		return nil, nil
	}
	var out []loadgen.Observer
	for i := range l.Len() {
		o, ok := l.Index(i).(Observer)
		if !ok {
			return nil, fmt.Errorf("%s: observe[%d]: a %s cannot be observed", name, i, l.Index(i).Type())
		}
		out = append(out, o)
	}
	return out, nil
}
