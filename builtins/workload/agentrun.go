package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	goruntime "runtime"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// AgentRun is what `benchbook agent` runs: one agent's share of an http or
// sql workload, through loadgen.Run as a local workload runs it. The
// target is made (connections opened, statements prepared) before the
// common start, so every agent begins sending at the agreed instant.
func AgentRun(ctx context.Context, spec fleet.Spec, start func() error, progress io.Writer) (*fleet.Result, error) {
	var l agentLoad
	if err := json.Unmarshal(spec.Load, &l); err != nil {
		return nil, fmt.Errorf("agent: spec: %w", err)
	}
	tgt, closeTgt, err := agentTarget(ctx, spec.Kind, l)
	if err != nil {
		return nil, err
	}
	defer closeTgt()
	s := l.Spec
	s.Progress, s.SeqBase = progress, spec.SeqBase
	if err := start(); err != nil {
		return nil, err
	}
	measureStart := time.Now().Add(s.Warmup)
	res := loadgen.Run(ctx, s, tgt)
	return agentResult(res, measureStart)
}

func agentTarget(ctx context.Context, kind string, l agentLoad) (loadgen.Target, func(), error) {
	switch {
	case kind == "http" && l.HTTP != nil:
		h := *l.HTTP
		h.Timeout = l.Spec.Timeout
		t, err := loadgen.NewHTTPTarget(h)
		if err != nil {
			return nil, nil, fmt.Errorf("agent: %w", err)
		}
		return t, func() {}, nil
	case kind == "sql" && l.SQL != nil:
		sq := loadgen.SQLSpec{DSN: l.SQL.DSN, Statements: l.SQL.Statements, Conns: l.Spec.Clients, Timeout: l.Spec.Timeout}
		if sq.Conns == 0 {
			sq.Conns = l.Spec.MaxInflight
		}
		if len(l.SQL.Args) > 0 {
			args, err := decodeArgs(l.SQL.Args)
			if err != nil {
				return nil, nil, fmt.Errorf("agent: args: %w", err)
			}
			sq.Args = func(int64) ([]any, error) { return args, nil }
		}
		t, err := loadgen.OpenSQL(ctx, sq)
		if err != nil {
			return nil, nil, fmt.Errorf("agent: %w", err)
		}
		return t, t.Close, nil
	}
	return nil, nil, fmt.Errorf("agent: cannot run a spec of kind %q (http and sql can)", kind)
}

// agentResult is loadgen's result in the protocol's form.
func agentResult(res *loadgen.Result, measureStart time.Time) (*fleet.Result, error) {
	out := &fleet.Result{Count: res.Count, Intended: res.Intended, Errors: res.Errors, Late: res.Late, Tick: int64(res.Tick),
		Dropped: res.Dropped, Undecided: res.Undecided, Duration: res.Measured.Seconds(),
		MeasureStart: measureStart.UnixNano(), CPU: res.CPU.Seconds(), Procs: goruntime.GOMAXPROCS(0),
		Interrupted: res.Interrupted, Warnings: res.Warnings, Trips: res.Trips}
	var err error
	enc := func(h *hdrhistogram.Histogram) string {
		if err != nil || h == nil {
			return ""
		}
		var s string
		s, err = fleet.EncodeHist(h)
		return s
	}
	out.Hist, out.OK, out.Service = enc(res.Hist), enc(res.OK), enc(res.Service)
	for i, w := range res.Windows {
		aw := fleet.Window{OK: w.Count, Errors: w.Errors}
		if i < len(res.WindowHists) {
			aw.Hist = enc(res.WindowHists[i])
		}
		out.Windows = append(out.Windows, aw)
	}
	if n := res.Count + sumErrors(res.Errors); n > 0 {
		out.GenCPU = float64(res.CPU.Microseconds()) / float64(n)
	}
	return out, err
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
