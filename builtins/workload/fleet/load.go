package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/h1wire"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/pgwire"
)

// Load is what an agent of an http or sql fleet runs (Spec.Load): the
// generator's spec, with this agent's share, and its target.
type Load struct {
	Spec loadgen.Spec     `json:"spec"`
	HTTP *h1wire.HTTPSpec `json:"http,omitempty"`
	SQL  *SQLLoad         `json:"sql,omitempty"`
}

// SQLLoad is pgwire.SQLSpec's plain part, with static args.
type SQLLoad struct {
	DSN        string             `json:"dsn"`
	Statements []pgwire.Statement `json:"statements"`
	Args       json.RawMessage    `json:"args,omitempty"` // static args; decodeArgs reads them
	Requests   []SQLLoadRequest   `json:"requests,omitempty"`
	Seed       uint64             `json:"seed,omitempty"`
}

// SQLLoadRequest is a mix's pgwire.SQLRequest, with static args.
type SQLLoadRequest struct {
	Tag        string             `json:"tag,omitempty"`
	Weight     float64            `json:"weight,omitempty"`
	Statements []pgwire.Statement `json:"statements"`
	Args       json.RawMessage    `json:"args,omitempty"`
}

// RunLoad runs load (its Spec the whole run's) on n agents that l
// launches: Specs divides it, Run starts and merges them, and the spec's
// observers sample the server around the common measurement window on
// this machine's clock, as a local run's do around its own. The merged
// run then has the observers' figures and trips, and every trip's warning.
func RunLoad(ctx context.Context, l Launcher, n int, kind string, load Load, o Options) (*Merged, error) {
	s := load.Spec
	specs, err := Specs(kind, load, n, o.Hang)
	if err != nil {
		return nil, err
	}
	o.Warmup, o.Duration, o.Window, o.Timeout = s.Warmup, s.Duration, s.Window, s.Timeout
	obs := &observers{spec: s, done: make(chan struct{})}
	onStart := o.OnStart
	o.OnStart = func(at time.Time) {
		obs.started = true
		go obs.run(ctx, at)
		if onStart != nil {
			onStart(at)
		}
	}
	m, err := Run(ctx, l, specs, o)
	if err != nil {
		return nil, err
	}
	obs.finish(m.Result)
	return m, nil
}

// Specs divides load: clients or rate (and the open loop's bound on
// requests in flight) across n agents, each with its own sequence range;
// an agent that hears nothing from its coordinator for 3 hangs (at least
// 30 s) stops.
func Specs(kind string, load Load, n int, hang time.Duration) ([]Spec, error) {
	spec := load.Spec
	shares, err := Split(spec.Clients, spec.Rate, n)
	if err != nil {
		return nil, err
	}
	if hang <= 0 {
		hang = defaultHang
	}
	var out []Spec
	for i, sh := range shares {
		l := load
		l.Spec.Clients, l.Spec.Rate, l.Spec.SeqBase = sh.Clients, sh.Rate, sh.SeqBase
		if spec.MaxInflight > 0 {
			l.Spec.MaxInflight = int(math.Ceil(float64(spec.MaxInflight) / float64(n)))
		}
		b, err := json.Marshal(l)
		if err != nil {
			return nil, err
		}
		silence := max(3*hang, 30*time.Second)
		out = append(out, Spec{Version: Version, Kind: kind, Load: b, Agent: i, Agents: n,
			SeqBase: sh.SeqBase, Silence: int64(silence)})
	}
	return out, nil
}

// AgentRun is what `benchbook agent` runs: one agent's share of an http or
// sql workload, through loadgen.Run as a local workload runs it. The
// target is made (connections opened, statements prepared) before the
// common start, so every agent begins sending at the agreed instant.
func AgentRun(ctx context.Context, spec Spec, start func() (time.Time, error), progress io.Writer) (*Report, error) {
	var l Load
	if err := json.Unmarshal(spec.Load, &l); err != nil {
		return nil, fmt.Errorf("agent: spec: %w", err)
	}
	tgt, closeTgt, err := l.target(ctx, spec.Kind)
	if err != nil {
		return nil, err
	}
	defer closeTgt()
	s := l.Spec
	s.Progress, s.SeqBase = progress, spec.SeqBase
	at, err := start()
	if err != nil {
		return nil, err
	}
	// From the agreed instant itself, not a wake-up and a watch later:
	// the agents' windows (and a concurrent group's scenarios) line up.
	res := loadgen.RunConcurrent(ctx, s.Observers, []loadgen.Scenario{{Spec: s, Target: tgt}}, at)[0]
	return &Report{Run: res, MeasureStart: at.Add(s.Warmup).UnixNano(), Procs: runtime.GOMAXPROCS(0)}, nil
}

func (l Load) target(ctx context.Context, kind string) (loadgen.Target, func(), error) {
	switch {
	case kind == "http" && l.HTTP != nil:
		h := *l.HTTP
		h.Timeout = l.Spec.Timeout
		t, err := h1wire.NewHTTPTarget(h)
		if err != nil {
			return nil, nil, fmt.Errorf("agent: %w", err)
		}
		return t, func() {}, nil
	case kind == "sql" && l.SQL != nil:
		sq := pgwire.SQLSpec{DSN: l.SQL.DSN, Statements: l.SQL.Statements, Conns: l.Spec.Clients, Timeout: l.Spec.Timeout, Seed: l.SQL.Seed}
		if sq.Conns == 0 {
			sq.Conns = l.Spec.MaxInflight
		}
		var err error
		if sq.Args, err = staticArgs(l.SQL.Args); err != nil {
			return nil, nil, fmt.Errorf("agent: args: %w", err)
		}
		for i, rq := range l.SQL.Requests {
			r := pgwire.SQLRequest{Tag: rq.Tag, Weight: rq.Weight, Statements: rq.Statements}
			if r.Args, err = staticArgs(rq.Args); err != nil {
				return nil, nil, fmt.Errorf("agent: requests[%d]: args: %w", i, err)
			}
			sq.Requests = append(sq.Requests, r)
		}
		t, err := pgwire.OpenSQL(ctx, sq)
		if err != nil {
			return nil, nil, fmt.Errorf("agent: %w", err)
		}
		return t, t.Close, nil
	}
	return nil, nil, fmt.Errorf("agent: cannot run a spec of kind %q (http and sql can)", kind)
}

// staticArgs is the args function of static args as the agent received
// them; nil for none.
func staticArgs(b json.RawMessage) (func(int64) ([]any, error), error) {
	if len(b) == 0 {
		return nil, nil
	}
	args, err := decodeArgs(b)
	if err != nil {
		return nil, err
	}
	return func(int64) ([]any, error) { return args, nil }, nil
}

// decodeArgs reads static SQL args as the agent received them: JSON numbers
// that are whole become int64 (as a notebook's ints were), others float64.
func decodeArgs(b []byte) ([]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var raw []any
	if err := d.Decode(&raw); err != nil {
		return nil, err
	}
	for i, v := range raw {
		if n, ok := v.(json.Number); ok {
			if k, err := n.Int64(); err == nil {
				raw[i] = k
			} else {
				raw[i], _ = n.Float64()
			}
		}
	}
	return raw, nil
}
