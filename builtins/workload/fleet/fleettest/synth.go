// Package fleettest is a simulated load with known truth, for testing
// fleets. Each agent's latencies come from a seeded generator that a test
// replays, so a merged run can be checked against one histogram holding
// every value. The real generator's fleet is tested in cmd/benchbook.
package fleettest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// AgentMain makes a test binary double as an agent: call it first in
// TestMain; it exits when os.Args say "agent". FLEET_TEST_SKEW skews the
// agent's clock.
func AgentMain() {
	if len(os.Args) < 2 || os.Args[1] != "agent" {
		return
	}
	if skew, err := time.ParseDuration(os.Getenv("FLEET_TEST_SKEW")); err == nil {
		fleet.SetClock(func() time.Time { return time.Now().Add(skew) })
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := fleet.Main(ctx, os.Args[2:], os.Stdin, os.Stdout, os.Stderr, Run); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Load is the simulated agents' spec.
type Load struct {
	Values   int    `json:"values"` // per agent
	Seed     uint64 `json:"seed"`
	Ms       int    `json:"ms"`      // how long the "load" lasts
	Windows  int    `json:"windows"` // values spread evenly over them
	DieAgent int    `json:"die_agent"`
	DieMs    int    `json:"die_ms"` // that agent exits with status 3 after this long
}

// Values are agent i's latencies (µs) and error flags.
func Values(l Load, agent int) (us []int64, failed []bool) {
	rng := rand.New(rand.NewPCG(l.Seed, uint64(agent)))
	for range l.Values {
		us = append(us, int64(50+math.Exp(rng.NormFloat64()+6+0.03*float64(agent))))
		failed = append(failed, rng.IntN(50) == 0)
	}
	return us, failed
}

// Run is the simulated agents' RunFunc: it lasts Load.Ms, prints progress, and
// reports the values Values gives for its agent index.
func Run(ctx context.Context, spec fleet.Spec, begin func() (time.Time, error), progress io.Writer) (*fleet.Report, error) {
	var l Load
	if err := json.Unmarshal(spec.Load, &l); err != nil {
		return nil, fmt.Errorf("synthetic load: %w", err)
	}
	at, err := begin()
	if err != nil {
		return nil, err
	}
	if !loadgen.SleepUntil(ctx, at) {
		return nil, fmt.Errorf("stopped before the start: %w", context.Cause(ctx))
	}
	start := time.Now()
	die := time.Duration(math.MaxInt64)
	if spec.Agent == l.DieAgent {
		die = time.Duration(l.DieMs) * time.Millisecond
	}
	for el := time.Duration(0); el < time.Duration(l.Ms)*time.Millisecond; el = time.Since(start) {
		if el >= die {
			os.Exit(3)
		}
		fmt.Fprintf(progress, "synthetic %.1fs\n", el.Seconds())
		select {
		case <-ctx.Done():
			rep := Fill(l, spec.Agent, time.Since(start))
			rep.Run.Interrupted, rep.MeasureStart = true, start.UnixNano()
			return rep, nil
		case <-time.After(100 * time.Millisecond):
		}
	}
	rep := Fill(l, spec.Agent, time.Since(start))
	rep.MeasureStart = start.UnixNano()
	return rep, nil
}

// Fill is agent's report of load l, measured for the given span: the
// values Values gives, spread evenly over l.Windows windows.
func Fill(l Load, agent int, measured time.Duration) *fleet.Report {
	us, failed := Values(l, agent)
	res := loadgen.NewResult()
	res.Measured = measured
	res.Windows = make([]loadgen.Window, l.Windows)
	res.WindowHists = make([]*hdrhistogram.Histogram, l.Windows)
	for i := range res.WindowHists {
		res.WindowHists[i] = hdrhistogram.New(loadgen.HistMin, loadgen.HistMax, 2)
		res.Windows[i].Errors = map[string]int64{}
	}
	for i, v := range us {
		w := i * l.Windows / len(us)
		_ = res.Hist.RecordValue(v)
		_ = res.WindowHists[w].RecordValue(v)
		if failed[i] {
			res.Errors["timeout"]++
			res.Windows[w].Errors["timeout"]++
			continue
		}
		_ = res.OK.RecordValue(v)
		res.Windows[w].Count++
	}
	res.Count, res.Intended = res.OK.TotalCount(), int64(len(us))
	return &fleet.Report{Run: res, Procs: 1}
}

// Specs are n agents' specs for load l.
func Specs(t *testing.T, l Load, n int) []fleet.Spec {
	t.Helper()
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	specs := make([]fleet.Spec, n)
	for i := range specs {
		specs[i] = fleet.Spec{Version: fleet.Version, Kind: "synthetic", Load: b, Agent: i, Agents: n, SeqBase: int64(i) * fleet.SeqRange, Silence: int64(5 * time.Second)}
	}
	return specs
}

// Oracle is one histogram holding every agent's values, and their successes.
func Oracle(l Load, agents []int) (all *hdrhistogram.Histogram, ok int64) {
	all = loadgen.NewHist()
	for _, a := range agents {
		us, failed := Values(l, a)
		for i, v := range us {
			_ = all.RecordValue(v)
			if !failed[i] {
				ok++
			}
		}
	}
	return all, ok
}

// SameDistribution fails unless a and b agree at every percentile and in
// count, min, max and mean.
func SameDistribution(t *testing.T, got, want *hdrhistogram.Histogram) {
	t.Helper()
	if got.TotalCount() != want.TotalCount() || got.Min() != want.Min() || got.Max() != want.Max() || got.Mean() != want.Mean() {
		t.Fatalf("merged count/min/max/mean %d/%d/%d/%.3f, one histogram %d/%d/%d/%.3f", got.TotalCount(), got.Min(), got.Max(), got.Mean(),
			want.TotalCount(), want.Min(), want.Max(), want.Mean())
	}
	for q := 0.0; q <= 100; q += 0.125 {
		if g, w := got.ValueAtQuantile(q), want.ValueAtQuantile(q); g != w {
			t.Fatalf("p%g: merged %d µs, one histogram %d µs", q, g, w)
		}
	}
}
