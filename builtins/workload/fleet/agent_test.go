package fleet

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
)

// The test binary doubles as an agent ("fleet.test agent"), whose load is
// a simulation with known truth: each agent's latencies come from a seeded
// generator the test replays, so the merged run can be checked against one
// histogram holding every value. The real generator's fleet is tested in
// cmd/benchbook, through `benchbook agent`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "agent" {
		os.Exit(testAgent())
	}
	os.Exit(m.Run())
}

func testAgent() int {
	if skew, err := time.ParseDuration(os.Getenv("FLEET_TEST_SKEW")); err == nil {
		now = func() time.Time { return time.Now().Add(skew) }
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := Serve(ctx, AgentOptions{In: os.Stdin, Out: os.Stdout, Run: synthRun}); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		return 1
	}
	return 0
}

// synthLoad is the simulated agents' spec.
type synthLoad struct {
	Values   int    `json:"values"` // per agent
	Seed     uint64 `json:"seed"`
	Ms       int    `json:"ms"`      // how long the "load" lasts
	Windows  int    `json:"windows"` // values spread evenly over them
	DieAgent int    `json:"die_agent"`
	DieMs    int    `json:"die_ms"` // that agent exits with status 3 after this long
}

// synthValues are agent i's latencies (µs) and error flags.
func synthValues(l synthLoad, agent int) (us []int64, failed []bool) {
	rng := rand.New(rand.NewPCG(l.Seed, uint64(agent)))
	for range l.Values {
		us = append(us, int64(50+math.Exp(rng.NormFloat64()+6+0.03*float64(agent))))
		failed = append(failed, rng.IntN(50) == 0)
	}
	return us, failed
}

func synthRun(ctx context.Context, spec Spec, progress io.Writer) (*Result, error) {
	var l synthLoad
	if err := json.Unmarshal(spec.Load, &l); err != nil {
		return nil, fmt.Errorf("synthetic load: %w", err)
	}
	start := time.Now()
	res := &Result{Errors: map[string]int64{}, MeasureStart: now().UnixNano(), Procs: 1}
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
			res.Interrupted = true
			return fillSynth(res, l, spec.Agent)
		case <-time.After(100 * time.Millisecond):
		}
	}
	res.Duration = time.Since(start).Seconds()
	return fillSynth(res, l, spec.Agent)
}

func fillSynth(res *Result, l synthLoad, agent int) (*Result, error) {
	us, failed := synthValues(l, agent)
	h, ok := newHist(), newHist()
	wins := make([]*hdrhistogram.Histogram, l.Windows)
	res.Windows = make([]Window, l.Windows)
	for i := range wins {
		wins[i] = hdrhistogram.New(1, 3_600_000_000, 2)
	}
	for i, v := range us {
		w := i * l.Windows / len(us)
		_ = h.RecordValue(v)
		_ = wins[w].RecordValue(v)
		if failed[i] {
			res.Errors["timeout"]++
			continue
		}
		_ = ok.RecordValue(v)
		res.Windows[w].OK++
	}
	res.Count, res.Intended = ok.TotalCount(), int64(len(us))
	var err error
	if res.Hist, err = EncodeHist(h); err != nil {
		return nil, err
	}
	if res.OK, err = EncodeHist(ok); err != nil {
		return nil, err
	}
	for i, w := range wins {
		if res.Windows[i].Hist, err = EncodeHist(w); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// synthSpecs are n agents' specs for load l.
func synthSpecs(t *testing.T, l synthLoad, n int) []Spec {
	t.Helper()
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	specs := make([]Spec, n)
	for i := range specs {
		specs[i] = Spec{Version: Version, Kind: "synthetic", Load: b, Agent: i, Agents: n, SeqBase: int64(i) * SeqRange, Silence: int64(5 * time.Second)}
	}
	return specs
}

// oracle is one histogram holding every agent's values, and their successes.
func oracle(l synthLoad, agents []int) (all *hdrhistogram.Histogram, ok int64) {
	all = newHist()
	for _, a := range agents {
		us, failed := synthValues(l, a)
		for i, v := range us {
			_ = all.RecordValue(v)
			if !failed[i] {
				ok++
			}
		}
	}
	return all, ok
}

// sameDistribution fails unless a and b agree at every percentile and in
// count, min, max and mean.
func sameDistribution(t *testing.T, got, want *hdrhistogram.Histogram) {
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
