//go:build linux

// Command overhead measures what generating the load from a fleet of agents
// costs. It measures the CPU per request of a fleet of 2 local agents
// (coordinator included) against one process generating the same total load:
// whole-process CPU (user + system, every process of the arm, from the
// kernel's accounting of reaped children), in counterbalanced ABBA rounds.
// One JSON line per run goes to stdout; keep them (bench/fleet/raw/).
//
//	go build -o /tmp/overhead ./bench/fleet/overhead && /tmp/overhead -rounds 2 -rate 2000 -duration 5s
//
// The target is this binary in a serve mode (net/http, "ok"), pinned to the
// last CPU; the generators are pinned to the others, as in bench/workload.
// Linux only: it pins with taskset and ties the target to it with the
// parent-death signal.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	goruntime "runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/benchbook/benchbook/builtins/hidden"
	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime/hostinfo"
)

func main() {
	hidden.Run() // the supervisor of the local agents is this binary re-executed
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "agent": // what `benchbook agent` runs
			exit(fleet.Main(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr, fleet.AgentRun))
		case "serve":
			exit(serve(os.Args[2]))
		case "arm":
			exit(arm(os.Args[2:]))
		}
	}
	exit(bench())
}

func exit(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "overhead:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func serve(addr string) error {
	return http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
}

// line is one run's figures.
type line struct {
	Arm        string  `json:"arm"` // "one" or "fleet2"
	Round      int     `json:"round"`
	Rate       float64 `json:"rate"`
	Requests   int64   `json:"requests"` // decided in the measurement window
	CPUSec     float64 `json:"cpu_s"`    // every process of the arm, whole lifetime
	CPUPerReq  float64 `json:"cpu_us_per_req"`
	P99Ms      float64 `json:"p99_ms"`
	Load1      string  `json:"load1"`
	Incomplete bool    `json:"incomplete,omitempty"`
}

func bench() error {
	rounds := flag.Int("rounds", 2, "ABBA rounds (each runs both arms twice)")
	rate := flag.Float64("rate", 2000, "total requests per second")
	duration := flag.Duration("duration", 5*time.Second, "measurement window of each run")
	flag.Parse()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	addr, stop, err := startTarget(self)
	if err != nil {
		return err
	}
	defer stop()
	order := []string{"one", "fleet2", "fleet2", "one"}
	for r := range *rounds {
		for _, a := range order {
			l, err := runArm(self, a, addr, *rate, *duration)
			if err != nil {
				return err
			}
			l.Round = r
			b, _ := json.Marshal(l)
			fmt.Println(string(b))
		}
	}
	return nil
}

func startTarget(self string) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	last := strconv.Itoa(goruntime.NumCPU() - 1)
	cmd := exec.Command("taskset", "-c", last, self, "serve", addr)
	cmd.Stderr = os.Stderr
	// The target goes with this program, however it ends (a closed pipe too).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return addr, func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }, nil
}

// runArm runs one arm in a child process and charges it every CPU second
// of that child and its descendants (agents are reaped by their
// coordinator, so RUSAGE_CHILDREN holds them once the child is reaped).
func runArm(self, arm, addr string, rate float64, d time.Duration) (line, error) {
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
	gen := strconv.Itoa(max(goruntime.NumCPU()-2, 0))
	cmd := exec.Command("taskset", "-c", "0-"+gen, self, "arm", arm, addr, strconv.FormatFloat(rate, 'f', -1, 64), d.String())
	cmd.Stderr = io.Discard
	out, err := cmd.Output()
	if err != nil {
		return line{}, fmt.Errorf("arm %s: %w", arm, err)
	}
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
	var l line
	if err := json.Unmarshal(out, &l); err != nil {
		return line{}, fmt.Errorf("arm %s: %w: %s", arm, err, out)
	}
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	l.Arm, l.Rate, l.CPUSec = arm, rate, cpu.Seconds()
	if l.Requests > 0 {
		l.CPUPerReq = float64(cpu.Microseconds()) / float64(l.Requests)
	}
	if load, err := hostinfo.LoadAvg(); err == nil {
		l.Load1 = strconv.FormatFloat(load[0], 'f', 2, 64)
	}
	return l, nil
}

// arm is the child: one process generating the whole rate, or a
// coordinator of 2 local agents sharing it. Both go through loadgen.Run.
func arm(args []string) error {
	if len(args) != 4 {
		return errors.New("arm ARM ADDR RATE DURATION")
	}
	rate, _ := strconv.ParseFloat(args[2], 64)
	d, _ := time.ParseDuration(args[3])
	spec := loadgen.Spec{Rate: rate, Arrival: "constant", Duration: d, Warmup: time.Second, Window: time.Second,
		Timeout: 2 * time.Second, MaxInflight: 64}
	hs := loadgen.HTTPSpec{URL: "http://" + args[1] + "/"}
	var l line
	switch args[0] {
	case "one":
		t, err := loadgen.NewHTTPTarget(hs)
		if err != nil {
			return err
		}
		res := loadgen.Run(context.Background(), spec, t)
		l.Requests, l.P99Ms = res.Count+loadgen.SumErrors(res.Errors), loadgen.QuantileMs(res.Hist, 99)
	case "fleet2":
		m, err := fleet.RunLoad(context.Background(), &fleet.Local{}, 2, "http", fleet.Load{Spec: spec, HTTP: &hs}, fleet.Options{})
		if err != nil {
			return err
		}
		var errs int64
		for _, v := range m.Errors {
			errs += v
		}
		l.Requests, l.P99Ms, l.Incomplete = m.Count+errs, loadgen.QuantileMs(m.Hist, 99), m.Incomplete
	default:
		return fmt.Errorf("unknown arm %q", args[0])
	}
	b, _ := json.Marshal(l)
	_, err := os.Stdout.Write(b)
	return err
}
