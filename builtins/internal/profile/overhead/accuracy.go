package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/profile"
	"github.com/benchbook/benchbook/runtime/procfs"
)

// accuracyRun is one run of the accuracy measurement, as accuracy.jsonl
// keeps it: what the samples stand for (samples × period) against what
// /proc says the target used over the same window.
type accuracyRun struct {
	Round     int     `json:"round"`
	Seq       int     `json:"seq"`
	Target    string  `json:"target"`    // "server": the hot server under HTTP load; "loop": a CPU-bound loop
	Condition string  `json:"condition"` // "box": the box as it is; "hog": CPU hogs beside the target
	Hogs      int     `json:"hogs"`      // hog processes running beside the target
	Requests  int64   `json:"requests"`
	Samples   int64   `json:"samples"`
	Lost      int64   `json:"lost"`      // samples perf says it lost
	PeriodNs  int64   `json:"period_ns"` // CPU time a sample stands for
	SampledMs float64 `json:"sampled_ms"`
	// ProcMs is utime + stime of /proc/PID/stat (whole process, 10 ms
	// ticks) over the window; SchedMs the sum of the threads' run time in
	// /proc/PID/task/*/schedstat (ns).
	ProcMs  float64 `json:"proc_ms"`
	SchedMs float64 `json:"sched_ms"`
	// Switches are the target's threads' context switches over the window
	// (voluntary and not, /proc/PID/task/*/status); Threads its threads.
	Switches int64    `json:"switches"`
	Threads  int      `json:"threads"`
	WallMs   float64  `json:"wall_ms"`
	Load1    float64  `json:"load1"`    // at the end of the run
	Warnings []string `json:"warnings"` // the profile's
}

// measureAccuracy compares samples × period with /proc's figures for two
// targets, each sampled as a workload run samples (armed, the window
// opened and closed around the work): the hot server under HTTP load
// (context switches at every request) and a CPU-bound loop (none but the
// scheduler's). Rounds of box, hog, hog, box for each: "box" is the box as
// it is, "hog" adds hogs CPU-bound processes beside the target.
func measureAccuracy(dir, bin string, rounds int, requests int64, clients, hz, hogs int) error {
	srv, addr, err := startServer(bin)
	if err != nil {
		return err
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	load(addr, clients, requests/3) // warm-up, not kept
	f, err := os.Create(filepath.Join(dir, "accuracy.jsonl"))
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	serve := func() (int64, error) { return load(addr, clients, requests), nil }
	for r := range rounds {
		for _, target := range []string{"server", "loop"} {
			for seq, cond := range []string{"box", "hog", "hog", "box"} {
				n := 0
				if cond == "hog" {
					n = hogs
				}
				var res accuracyRun
				if target == "server" {
					res, err = accuracyOnce(srv.Process.Pid, bin, hz, n, serve)
				} else {
					res, err = accuracyLoop(bin, hz, n)
				}
				if err != nil {
					return err
				}
				res.Round, res.Seq, res.Target, res.Condition = r, seq, target, cond
				if err := enc.Encode(res); err != nil {
					return err
				}
				fmt.Fprintf(os.Stderr, "round %d %-6s %-3s sampled %7.1f ms, /proc %7.1f ms (%.3f), schedstat %7.1f ms, %d switches, %d lost, load %.1f\n",
					r, target, cond, res.SampledMs, res.ProcMs, res.SampledMs/res.ProcMs, res.SchedMs, res.Switches, res.Lost, res.Load1)
			}
		}
	}
	return writeMeta(dir, rounds, requests, clients, hz, fmt.Sprintf("pids, armed, %d hogs in the hog runs", hogs))
}

// loopWindow is how long a loop run's window stays open.
const loopWindow = 4 * time.Second

// accuracyLoop samples a CPU-bound loop (the hot server's -spin) for
// loopWindow.
func accuracyLoop(bin string, hz, hogs int) (accuracyRun, error) {
	loop := exec.Command(bin, "-spin", (loopWindow + 3*time.Second).String())
	if err := loop.Start(); err != nil {
		return accuracyRun{}, err
	}
	defer func() { loop.Process.Kill(); loop.Wait() }()
	return accuracyOnce(loop.Process.Pid, bin, hz, hogs, func() (int64, error) {
		time.Sleep(loopWindow)
		return 0, nil
	})
}

// accuracyOnce samples pid while work runs, hogs beside it, and reads
// /proc just inside the window.
func accuracyOnce(pid int, bin string, hz, hogs int, work func() (int64, error)) (accuracyRun, error) {
	var hogCmds []*exec.Cmd
	defer func() {
		for _, h := range hogCmds {
			h.Process.Kill()
			h.Wait()
		}
	}()
	for range hogs {
		h := exec.Command(bin, "-spin", "5m") // bounded, and killed when the run ends
		if err := h.Start(); err != nil {
			return accuracyRun{}, err
		}
		hogCmds = append(hogCmds, h)
	}
	rec, err := profile.StartPerf(context.Background(), profile.Target{Name: "target", Lister: profile.ProcessTree(pid)},
		profile.PerfOptions{Hz: hz, Armed: true})
	if err != nil {
		return accuracyRun{}, err
	}
	if err := rec.Enable(); err != nil {
		rec.Stop()
		return accuracyRun{}, err
	}
	p0, s0, c0, t0 := procTicksMs(pid), cpuUs(pid), must(procfs.ContextSwitches(pid)), time.Now()
	n, werr := work()
	p1, s1, c1, wall := procTicksMs(pid), cpuUs(pid), must(procfs.ContextSwitches(pid)), time.Since(t0)
	threads := len(must(procfs.Tasks(pid)))
	rec.Disable()
	p, err := rec.Stop()
	if err = cmp.Or(werr, err); err != nil {
		return accuracyRun{}, err
	}
	return accuracyRun{Hogs: hogs, Requests: n, Samples: p.Samples, Lost: p.Lost, PeriodNs: p.PeriodNs,
		SampledMs: float64(p.CPUNs) / 1e6, ProcMs: p1 - p0, SchedMs: (s1 - s0) / 1e3, Switches: c1 - c0, Threads: threads,
		WallMs: float64(wall.Microseconds()) / 1e3, Load1: load1(), Warnings: p.Warnings}, nil
}

func must[T any](v T, _ error) T { return v }

// procTicksMs is utime + stime of /proc/PID/stat in ms (USER_HZ = 100:
// /proc's clock ticks are 10 ms on Linux whatever the kernel's HZ).
func procTicksMs(pid int) float64 {
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return math.NaN()
	}
	return float64(st.CPU().Microseconds()) / 1e3
}

// printAccuracy reads accuracy.jsonl and meta.json and prints each run's
// sampled CPU against /proc's, then per condition the range and median of
// the ratios.
func printAccuracy(w io.Writer, dir string) error {
	var meta map[string]any
	if b, err := os.ReadFile(filepath.Join(dir, "meta.json")); err == nil {
		json.Unmarshal(b, &meta)
	}
	f, err := os.Open(filepath.Join(dir, "accuracy.jsonl"))
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(w, "Targets: the hot server (arm A), %v requests per run from %v clients, and a CPU-bound loop (its -spin) for %v; perf %v at %v Hz (%v), on %v; %v, %v CPUs.\n\n",
		meta["requests"], meta["clients"], loopWindow, meta["event"], meta["hz"], meta["by"], meta["kernel"], meta["go"], meta["cpus"])
	fmt.Fprintln(w, "| round | target | condition | samples | lost | sampled ms | /proc utime+stime ms | sampled / /proc | schedstat ms | sampled / schedstat | context switches | µs missed a switch | load average |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	ratios := map[string][]float64{}
	loads := map[string][]float64{}
	var conds []string
	dec := json.NewDecoder(f)
	for {
		var r accuracyRun
		if err := dec.Decode(&r); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		ratio := r.SampledMs / r.ProcMs
		key := r.Target + ", " + r.Condition
		if _, ok := ratios[key]; !ok {
			conds = append(conds, key)
		}
		ratios[key] = append(ratios[key], ratio)
		loads[key] = append(loads[key], r.Load1)
		perSwitch := "–"
		if r.Switches > 0 {
			perSwitch = fmt.Sprintf("%.1f", 1e3*(r.SchedMs-r.SampledMs)/float64(r.Switches))
		}
		fmt.Fprintf(w, "| %d | %s | %s | %d | %d | %.0f | %.0f | %.3f | %.0f | %.3f | %d | %s | %.1f |\n",
			r.Round+1, r.Target, condName(r), r.Samples, r.Lost, r.SampledMs, r.ProcMs, ratio, r.SchedMs, r.SampledMs/r.SchedMs, r.Switches, perSwitch, r.Load1)
	}
	fmt.Fprintln(w)
	for _, c := range conds {
		rs := slices.Sorted(slices.Values(ratios[c]))
		fmt.Fprintf(w, "- %s: sampled / /proc from **%+.1f %% to %+.1f %%** (median %+.1f %%, %d runs), load average %.1f-%.1f at the runs' ends.\n",
			c, 100*(rs[0]-1), 100*(rs[len(rs)-1]-1), 100*(median(rs)-1), len(rs), slices.Min(loads[c]), slices.Max(loads[c]))
	}
	return nil
}

func condName(r accuracyRun) string {
	if r.Hogs > 0 {
		return fmt.Sprintf("%s (%d)", r.Condition, r.Hogs)
	}
	return r.Condition
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
