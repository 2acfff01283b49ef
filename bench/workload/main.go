// Command wlbench drives the side-by-side comparisons in compare.sh:
//
//	wlbench hello -addr 127.0.0.1:8089          a Go net/http "hello" target (port 0: a free one, printed)
//	wlbench http -url U -clients 16 -duration 10s [-rate R] [-warmup 2s] [-mix N]
//	wlbench sql -dsn D -clients 16 -duration 10s [-scale 1] [-rate R] [-warmup 2s]
//	wlbench cpu -- CMD ARGS...                   run CMD, print its user+sys CPU
//
// http and sql run benchbook's workload module and print one line of
// key=value figures; the generator's CPU is this whole process's rusage,
// the same way compare.sh measures wrk, pgbench and vegeta.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/workload"
	"github.com/benchbook/benchbook/runtime"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "wlbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, stdout io.Writer, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: wlbench hello|http|sql|cpu ...")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8089", "hello: listen address")
	url := fs.String("url", "http://127.0.0.1:8089/", "http: target")
	dsn := fs.String("dsn", "", "sql: DSN")
	clients := fs.Int("clients", 16, "closed loop clients")
	rate := fs.Float64("rate", 0, "open loop rate (0: closed loop)")
	duration := fs.String("duration", "10s", "measurement duration")
	arrival := fs.String("arrival", "constant", "http, sql open loop: constant or poisson (pgbench -R's schedule)")
	tick := fs.String("tick", "auto", "http, sql open loop: send requests on ticks of this length (wrk2: 1ms; 0s: each at its intended start; auto: benchbook's default)")
	warmup := fs.String("warmup", "2s", "http, sql: warmup before the measurement (0s: whole-process CPU covers only measured requests)")
	scale := fs.Int("scale", 1, "sql: pgbench scale (100000 accounts each)")
	cpuProfile := fs.String("cpuprofile", "", "http, sql: write a CPU profile of the whole run here")
	mix := fs.Int("mix", 0, "http: a mix of N requests, paths /k0 .. /kN-1 each with its tag, equal weights (0: one untagged request)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := startProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	switch args[0] {
	case "hello":
		return hello(stdout, *addr)
	case "cpu":
		return childCPU(stdout, fs.Args())
	case "http":
		loop := fmt.Sprintf("clients = %d", *clients)
		if *rate > 0 {
			loop = fmt.Sprintf("rate = %g, arrival = %q, max_inflight = %d, tick = %q", *rate, *arrival, *clients, *tick)
		}
		if *mix > 0 {
			var kinds []string
			for i := range *mix {
				kinds = append(kinds, fmt.Sprintf(`{"url": "/k%d", "tag": "k%d"}`, i, i))
			}
			loop += ", requests = [" + strings.Join(kinds, ", ") + "]"
		}
		return load(ctx, stdout, fmt.Sprintf(`r = workload.http(%q, %s, duration = %q, warmup = %q)`, *url, loop, *duration, *warmup), nil)
	case "sql":
		accounts := int64(*scale) * 100000
		gen := goFunc{func() []any { return []any{rand.Int64N(accounts) + 1} }}
		loop := fmt.Sprintf("clients = %d", *clients)
		if *rate > 0 {
			loop = fmt.Sprintf("rate = %g, arrival = %q, max_inflight = %d, tick = %q", *rate, *arrival, *clients, *tick)
		}
		src := fmt.Sprintf(`r = workload.sql(%q, query = "SELECT abalance FROM pgbench_accounts WHERE aid = $1", args = gen, %s, duration = %q, warmup = %q)`, *dsn, loop, *duration, *warmup)
		return load(ctx, stdout, src, starlark.StringDict{"gen": gen})
	}
	return fmt.Errorf("unknown mode %q", args[0])
}

// hello serves "hello\n" on addr (port 0: any free one), and says where
// on its first line, for callers that cannot pick a port.
func hello(stdout io.Writer, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())
	return http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "hello\n")
	}))
}

// load runs one workload call and prints its figures.
func load(ctx context.Context, stdout io.Writer, src string, globals starlark.StringDict) error {
	mods := runtime.MustModuleSet(nil, workload.Module(workload.Options{}))
	s := &runtime.Session{Ctx: ctx, Stderr: os.Stderr, NotebookDir: ".", CacheDir: os.TempDir(), Modules: mods}
	defer s.Close()
	th := s.NewThread(&runtime.Cell{Name: "bench"})
	pre := mods.Globals()
	for k, v := range globals {
		pre[k] = v
	}
	g, err := starlark.ExecFile(th, "bench.star", src, pre)
	if err != nil {
		return err
	}
	r := g["r"].(*workload.Run)
	attr := func(name string) starlark.Value { v, _ := r.Attr(name); return v }
	h := r.Hdr()
	svc := h // closed loop: latency is service time
	if v, ok := attr("service").(*workload.Histogram); ok {
		svc = v.Hdr()
	}
	// intended, late, dropped, undecided and duration_s let results decide
	// whether an open loop held its rate from what it sent on time: rps
	// counts responses, however late their requests left.
	fmt.Fprintf(stdout, "tool=benchbook tags=%d rps=%.0f count=%s intended=%s late=%s dropped=%s undecided=%s duration_s=%s tick_ms=%s cpu_us_per_req=%.2f p50_ms=%.3f p99_ms=%.3f mean_ms=%.3f service_p50_ms=%.3f errors=%s warnings=%q\n",
		len(r.Tags()), r.RPS(), attr("count"), attr("intended"), attr("late"), attr("dropped"), attr("undecided"), attr("duration"), attr("tick_ms"), float64(attr("gen_cpu_us_per_req").(starlark.Float)),
		float64(h.ValueAtQuantile(50))/1000, float64(h.ValueAtQuantile(99))/1000, h.Mean()/1000,
		float64(svc.ValueAtQuantile(50))/1000, attr("errors"), r.Warnings())
	return nil
}

// startProfile writes a CPU profile to path until the returned func is called.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func childCPU(stdout io.Writer, argv []string) error {
	if len(argv) == 0 {
		return fmt.Errorf("cpu: no command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return err
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	fmt.Fprintf(stdout, "cpu_s=%.3f user_s=%.3f sys_s=%.3f\n", float64(ru.Utime.Nano()+ru.Stime.Nano())/1e9,
		float64(ru.Utime.Nano())/1e9, float64(ru.Stime.Nano())/1e9)
	return nil
}

// goFunc hands a Go func to workload the way gocode functions do.
type goFunc struct{ f any }

func (g goFunc) Func() any             { return g.f }
func (g goFunc) String() string        { return "gofunc" }
func (g goFunc) Type() string          { return "gofunc" }
func (g goFunc) Freeze()               {}
func (g goFunc) Truth() starlark.Bool  { return true }
func (g goFunc) Hash() (uint32, error) { return 0, nil }
