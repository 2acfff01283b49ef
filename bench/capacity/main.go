// Command capbench measures @std/capacity.star against a target whose
// capacity is known by construction, and against plain sweeps of the same
// range:
//
//	capbench serve -workers 2 -service 10ms      c workers that each sleep S per request (a child)
//	capbench -out DIR [-searches 20] [-sweeps 3]  repeated searches and sweeps, raw JSON lines kept in DIR
//	capbench -table DIR[,DIR] [-write RESULTS.md] RESULTS.md's tables from the DIRs' files alone
//
// The target runs in a process of its own, so the generator's CPU is its
// own. Two studies: closed-loop users with zero think time against 2 workers
// of 10 ms at p99 <= 50 ms, and users who think 40 ms against 2 workers of
// 4 ms at a mean limit halfway between two user counts (the interactive
// response-time law R = N·S/c - Z). The truths follow from the service the
// server gave (study.truth says how). For each search: its value,
// interval, runs, levels and seconds, the truth, the load average; for each
// sweep (by doubling from lo, and at every level from lo to hi, one run a
// level, as a notebook without capacity would): its runs, seconds and the
// crossing it shows.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/host"
	"github.com/benchbook/benchbook/builtins/metric"
	"github.com/benchbook/benchbook/builtins/workload"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/hostinfo"
	"github.com/benchbook/benchbook/stdlib"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "capbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, stdout io.Writer, args []string) error {
	if len(args) > 0 && args[0] == "serve" {
		return serve(stdout, args[1:])
	}
	fs := flag.NewFlagSet("capbench", flag.ContinueOnError)
	out := fs.String("out", "", "run the searches and sweeps, keeping raw JSON lines in this directory")
	table := fs.String("table", "", "print RESULTS.md's tables from directories -out wrote (comma-separated, in order)")
	write := fs.String("write", "", "with -table: replace the generated section of this file")
	searches := fs.Int("searches", 20, "searches per study")
	sweeps := fs.Int("sweeps", 3, "plain sweeps of each kind per study")
	only := fs.String("study", "", "run one study: zero-think or think")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *out != "":
		return measure(ctx, *out, *searches, *sweeps, *only)
	case *table != "":
		return writeTables(stdout, *table, *write)
	}
	fs.Usage()
	return fmt.Errorf("give -out DIR or -table DIR")
}

// study is one target and one SLO, with how the truth follows from the
// service the server gave.
type study struct {
	Name     string  `json:"name"`
	Workers  int     `json:"workers"`
	Service  string  `json:"service"`
	Think    string  `json:"think"`    // "" for zero think
	ThinkMs  float64 `json:"think_ms"` // the same, ms
	Metric   string  `json:"metric"`   // "p99" or "mean"
	Limit    float64 `json:"limit"`    // ms; for think, set from a calibration run
	Lo       int     `json:"lo"`
	Hi       int     `json:"hi"`
	Duration string  `json:"duration"`
	Warmup   string  `json:"warmup"`
}

func studies() []study {
	return []study{
		{Name: "zero-think", Workers: 2, Service: "10ms", Metric: "p99", Limit: 50, Lo: 1, Hi: 32, Duration: "0.5s", Warmup: "0.2s"},
		{Name: "think", Workers: 2, Service: "4ms", Think: "40ms", ThinkMs: 40, Metric: "mean", Lo: 8, Hi: 128, Duration: "0.5s", Warmup: "0.3s"},
	}
}

// truth is the range of capacities the service the server gave allows,
// for its mean m and standard deviation sd (ms; NaN when not recorded).
//
// Zero think, p99: N users queue in turn on c workers, so a request waits
// through N/c services on average but ceil(N/c) at worst (9 users on 2
// workers wait 4 and 5 services by turns), and the p99 is the worst wait:
// hi is the largest N whose ceil(N/c)·m is within the limit, lo the largest
// whose ceil(N/c)·m + 2.33·sqrt(ceil(N/c))·sd is (the sum's p99 for
// independent services). Without sd, lo = hi. The mean wait's model,
// floor(L·c/m), said 9 where every quiet search found 8 (stdlib's
// TestCapacityOfWorkersAtZeroThink), and this bench's first table judged
// its searches against it.
//
// Think time, mean: the law's crossing N = (L + Z)·c/m, within 2 % either
// way (the service drifts during a search, and a worker's wake-up after
// each service adds to it).
func (st study) truth(m, sd float64) (lo, hi float64) {
	c := float64(st.Workers)
	if st.Metric == "mean" {
		n := (st.Limit + st.ThinkMs) * c / m
		return math.Floor(n / 1.02), math.Floor(n * 1.02)
	}
	for n := 1.0; n <= 4*float64(st.Hi); n++ {
		k := math.Ceil(n / c)
		if k*m <= st.Limit {
			hi = n
		}
		if math.IsNaN(sd) || k*m+2.33*math.Sqrt(k)*sd <= st.Limit {
			lo = n
		}
	}
	return min(lo, hi), hi
}

// record is one search or sweep, as a raw JSON line.
type record struct {
	Study    string     `json:"study"`
	Kind     string     `json:"kind"` // "search", "sweep-doubling", "sweep-every"
	Value    *float64   `json:"value"`
	Low      *float64   `json:"low"`
	High     *float64   `json:"high"`
	Status   string     `json:"status"`
	Runs     int        `json:"runs"`
	Levels   int        `json:"levels"`
	Seconds  float64    `json:"seconds"` // wall time of the whole search or sweep
	Service  float64    `json:"service_ms"`
	SD       *float64   `json:"service_sd_ms,omitempty"` // not in the first raw files
	TruthLo  float64    `json:"truth_lo"`
	TruthHi  float64    `json:"truth_hi"`
	Limit    float64    `json:"limit"`
	Load1    [2]float64 `json:"load1"` // before, after
	Warnings []string   `json:"warnings,omitempty"`
	Sentence string     `json:"sentence,omitempty"`
}

func measure(ctx context.Context, dir string, searches, sweeps int, only string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	env := map[string]any{"when": time.Now().UTC().Format(time.RFC3339), "host": hostinfo.Read(), "searches": searches, "sweeps": sweeps}
	if err := writeJSON(filepath.Join(dir, "env.json"), env); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, st := range studies() {
		if only != "" && st.Name != only {
			continue
		}
		srv, err := startServer(ctx, st)
		if err != nil {
			return err
		}
		if st.Limit == 0 { // think: halfway between two user counts for the service given
			s := srv.calibrate()
			st.Limit = (40.5)*s/float64(st.Workers) - st.ThinkMs
			lo, hi := st.truth(s, math.NaN())
			fmt.Fprintf(os.Stderr, "%s: service %.3f ms, limit %.3f ms (truth %g to %g)\n", st.Name, s, st.Limit, lo, hi)
		}
		for i := range searches {
			r, err := srv.search(ctx, st, fmt.Sprint(i))
			if err != nil {
				srv.stop()
				return err
			}
			fmt.Fprintf(os.Stderr, "%s search %d: %s [%v, %v] truth %g to %g, %d runs, %.0f s\n", st.Name, i+1, r.Status, ptr(r.Low), ptr(r.High), r.TruthLo, r.TruthHi, r.Runs, r.Seconds)
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		for range sweeps {
			for _, kind := range []string{"sweep-doubling", "sweep-every"} {
				r, err := srv.sweep(ctx, st, kind)
				if err != nil {
					srv.stop()
					return err
				}
				fmt.Fprintf(os.Stderr, "%s %s: [%v, %v] truth %g to %g, %d runs, %.0f s\n", st.Name, kind, ptr(r.Low), ptr(r.High), r.TruthLo, r.TruthHi, r.Runs, r.Seconds)
				if err := enc.Encode(r); err != nil {
					return err
				}
			}
		}
		srv.stop()
	}
	return nil
}

func ptr(p *float64) any {
	if p == nil {
		return "none"
	}
	return *p
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// server is the target child: its URL, and its own count of the service
// it gave.
type server struct {
	url string
	cmd *exec.Cmd
}

func startServer(ctx context.Context, st study) (*server, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, "serve", "-workers", fmt.Sprint(st.Workers), "-service", st.Service)
	cmd.Stderr = os.Stderr
	outp, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// The child reads its stdin to the end: it ends when this process
	// does, however it ends.
	lifeline, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	_ = lifeline
	var addr string
	if _, err := fmt.Fscanln(outp, &addr); err != nil {
		cmd.Process.Kill()
		return nil, fmt.Errorf("serve: no address: %w", err)
	}
	return &server{url: "http://" + addr, cmd: cmd}, nil
}

func (s *server) stop() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// stats resets the server's count, or reads the mean service since and
// its standard deviation (ms).
func (s *server) stats(reset bool) (mean, sd float64) {
	path := "/stats"
	if reset {
		path = "/reset"
	}
	resp, err := http.Get(s.url + path)
	if err != nil {
		return math.NaN(), math.NaN()
	}
	defer resp.Body.Close()
	var v struct {
		MeanMs float64 `json:"mean_ms"`
		SDMs   float64 `json:"sd_ms"`
	}
	if json.NewDecoder(resp.Body).Decode(&v) != nil {
		return math.NaN(), math.NaN()
	}
	return v.MeanMs, v.SDMs
}

// calibrate serves 40 requests one at a time: the service time, ms.
func (s *server) calibrate() float64 {
	s.stats(true)
	for range 40 {
		if resp, err := http.Get(s.url + "/"); err == nil {
			resp.Body.Close()
		}
	}
	m, _ := s.stats(false)
	return m
}

// runFn is the notebook's run(users) for st.
func runFn(st study, url string) string {
	think := ""
	if st.Think != "" {
		think = fmt.Sprintf(", think = %q", st.Think)
	}
	return fmt.Sprintf("lambda n: workload.http(%q, users = n%s, duration = %q, warmup = %q)", url+"/", think, st.Duration, st.Warmup)
}

func (s *server) search(ctx context.Context, st study, name string) (record, error) {
	src := fmt.Sprintf(`load("@std/capacity.star", "capacity")
cap = capacity(%s, {%q: %g}, %d, %d, name = %q)
`, runFn(st, s.url), st.Metric, st.Limit, st.Lo, st.Hi, "search-"+name)
	rec := record{Study: st.Name, Kind: "search", Limit: st.Limit}
	g, err := s.timed(ctx, st, src, &rec)
	if err != nil {
		return rec, err
	}
	c := g["cap"].(*metric.Capacity)
	rec.Value, rec.Low, rec.High = fin(c.Value), fin(c.Low), fin(c.High)
	rec.Status, rec.Runs, rec.Levels = c.Status, len(c.Points), len(c.Levels)
	rec.Warnings, rec.Sentence = c.Warnings, c.Sentence()
	return rec, nil
}

// timed runs src, noting in rec its wall time, the load average around it,
// the service the server gave meanwhile and the truth that follows.
func (s *server) timed(ctx context.Context, st study, src string, rec *record) (starlark.StringDict, error) {
	s.stats(true)
	rec.Load1[0] = load1()
	t0 := time.Now()
	g, err := exec1(ctx, src)
	if err != nil {
		return nil, err
	}
	rec.Seconds = time.Since(t0).Seconds()
	rec.Load1[1] = load1()
	var sd float64
	rec.Service, sd = s.stats(false)
	rec.SD = &sd
	rec.TruthLo, rec.TruthHi = st.truth(rec.Service, sd)
	return g, nil
}

// sweep runs a plain sweep of one run a level and reads its crossing: the
// last level that met the limit before the first that broke it.
func (s *server) sweep(ctx context.Context, st study, kind string) (record, error) {
	var levels []int
	for n := st.Lo; n <= st.Hi; {
		levels = append(levels, n)
		if kind == "sweep-doubling" {
			n *= 2
		} else {
			n++
		}
	}
	var lv []string
	for _, n := range levels {
		lv = append(lv, fmt.Sprint(n))
	}
	src := fmt.Sprintf(`run = %s
figs = []
for n in [%s]:
    r = run(n)
    figs.append((n, r.p(99) if %q == "p99" else r.mean))
    if figs[-1][1] > %g:
        break
`, runFn(st, s.url), strings.Join(lv, ", "), st.Metric, st.Limit)
	rec := record{Study: st.Name, Kind: kind, Limit: st.Limit, Status: "ok"}
	g, err := s.timed(ctx, st, src, &rec)
	if err != nil {
		return rec, err
	}
	figs := starval(g["figs"])
	rec.Runs, rec.Levels = len(figs), len(figs)
	last := figs[len(figs)-1]
	if last[1] <= st.Limit { // held at hi
		rec.Status = "above"
		rec.Low = fin(last[0])
		return rec, nil
	}
	if len(figs) == 1 {
		rec.Status = "below"
		rec.High = fin(last[0] - 1)
		return rec, nil
	}
	prev := figs[len(figs)-2][0]
	rec.Value, rec.Low, rec.High = fin(prev), fin(prev), fin(last[0]-1)
	return rec, nil
}

func starval(v starlark.Value) [][2]float64 {
	var out [][2]float64
	for x := range starlark.Elements(v.(*starlark.List)) {
		t := x.(starlark.Tuple)
		a, _ := starlark.AsFloat(t[0])
		b, _ := starlark.AsFloat(t[1])
		out = append(out, [2]float64{a, b})
	}
	return out
}

func fin(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func load1() float64 {
	l, err := hostinfo.LoadAvg()
	if err != nil {
		return math.NaN()
	}
	return l[0]
}

// exec1 runs src with the stdlib, the workload, metric and host modules,
// as a notebook cell without a cache (memo runs every run).
func exec1(ctx context.Context, src string) (starlark.StringDict, error) {
	mods := runtime.MustModuleSet(stdlib.FS, workload.Module(workload.Options{}), metric.Module(), host.Module())
	s := &runtime.Session{Ctx: ctx, Stderr: io.Discard, NotebookDir: ".", CacheDir: os.TempDir(), Modules: mods}
	defer s.Close()
	th := s.NewThread(&runtime.Cell{Name: "capbench"})
	return starlark.ExecFileOptions(runtime.FileOptions(), th, "capbench.star", src, mods.Globals())
}

// serve is the target: c workers (a semaphore) that each sleep the
// service time per request, counting the service they gave.
func serve(stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	workers := fs.Int("workers", 2, "requests served at once")
	service := fs.Duration("service", 10*time.Millisecond, "time each request takes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, ln.Addr())
	sem := make(chan struct{}, *workers)
	var mu sync.Mutex
	var busy time.Duration
	var sq float64 // sum of squared services, ms²
	var served int
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		sem <- struct{}{}
		t0 := time.Now()
		time.Sleep(*service)
		d := time.Since(t0)
		<-sem
		mu.Lock()
		busy += d
		sq += float64(d) * float64(d) / 1e12
		served++
		mu.Unlock()
		io.WriteString(w, "ok")
	})
	stats := func(reset bool) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			mu.Lock()
			mean, sd := 0.0, 0.0
			if served > 0 {
				mean = float64(busy) / float64(served) / 1e6
				sd = math.Sqrt(max(0, sq/float64(served)-mean*mean))
			}
			if reset {
				busy, sq, served = 0, 0, 0
			}
			mu.Unlock()
			fmt.Fprintf(w, `{"mean_ms": %g, "sd_ms": %g}`, mean, sd)
		}
	}
	mux.HandleFunc("/stats", stats(false))
	mux.HandleFunc("/reset", stats(true))
	go func() { // die with the parent: its pipe closes
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	return http.Serve(ln, mux)
}
