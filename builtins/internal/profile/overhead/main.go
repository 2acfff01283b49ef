// Command overhead is bench/profile's driver: what perf sampling costs a
// target. It measures what perf sampling (profile.StartPerf, as workload
// runs use it) costs the target, in the target's own CPU per request, with
// and without sampling, in ABBA order, and keeps every run's raw figures. It
// lives here because bench/ cannot import builtins/internal.
//
//	go run ./builtins/internal/profile/overhead -out DIR     # run, write DIR/runs.jsonl and DIR/meta.json
//	go run ./builtins/internal/profile/overhead -table DIR   # the Markdown table from those files alone
//	go run ./builtins/internal/profile/overhead -accuracy -out DIR  # samples × period against /proc, DIR/accuracy.jsonl
//	go run ./builtins/internal/profile/overhead -table DIR   # (a DIR holding accuracy.jsonl: that table)
//
// The target is the profile tests' hot server (arm A), built from
// builtins/internal/profile/testdata/hotserver; its CPU is read from
// /proc/PID/task/*/schedstat around each run.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/profile"
	"github.com/benchbook/benchbook/runtime/hostinfo"
	"github.com/benchbook/benchbook/runtime/procfs"
)

// result is one run, as runs.jsonl keeps it.
type result struct {
	Round    int     `json:"round"`
	Seq      int     `json:"seq"`  // order within the round: 0..3
	Mode     string  `json:"mode"` // "off" or "perf"
	Requests int64   `json:"requests"`
	CPUUs    float64 `json:"cpu_us"` // the target's CPU over the run
	UsPerReq float64 `json:"us_per_req"`
	Samples  int64   `json:"samples"` // perf's, 0 when off
	WallMs   float64 `json:"wall_ms"`
	Load1    float64 `json:"load1"` // the box's load average at the end
}

func main() {
	out := flag.String("out", "", "run the measurement and write raw files to this directory")
	table := flag.String("table", "", "print the table from the raw files in this directory")
	rounds := flag.Int("rounds", 4, "ABBA rounds (off, perf, perf, off)")
	requests := flag.Int64("requests", 3000, "requests per run")
	clients := flag.Int("clients", 2, "concurrent clients")
	hz := flag.Int("hz", profile.DefaultHz, "perf sampling rate")
	work := flag.Int("work", 0, "instead of serving, time a fixed CPU-bound work (hotA this many times, no context switches) with and without perf")
	accuracy := flag.Bool("accuracy", false, "instead of the cost, measure what the samples stand for (samples × period) against /proc's CPU of the target, on the box as it is and with -hogs CPU hogs beside it")
	hogs := flag.Int("hogs", 2, "with -accuracy: CPU-bound processes run beside the target in the hog runs")
	by := flag.String("by", "pids", "how perf finds the target: pids (-p, the default of a process target) or cgroup (-a -G, the server moved into a cgroup of its own)")
	flag.Parse()
	var err error
	switch {
	case *table != "":
		if _, serr := os.Stat(filepath.Join(*table, "accuracy.jsonl")); serr == nil {
			err = printAccuracy(os.Stdout, *table)
		} else {
			err = printTable(os.Stdout, *table)
		}
	case *out != "":
		err = measure(*out, *rounds, *requests, *clients, *hz, *by, *work, *accuracy, *hogs)
	default:
		err = fmt.Errorf("give -out DIR or -table DIR")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "overhead:", err)
		os.Exit(1)
	}
}

func measure(dir string, rounds int, requests int64, clients, hz int, by string, work int, accuracy bool, hogs int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bin := filepath.Join(os.TempDir(), fmt.Sprintf("hotserver-%d", os.Getpid()))
	defer os.Remove(bin)
	if b, err := exec.Command("go", "build", "-o", bin, "./builtins/internal/profile/testdata/hotserver").CombinedOutput(); err != nil {
		return fmt.Errorf("building the hot server (run from the repository's root): %v\n%s", err, b)
	}
	if work > 0 {
		return measureWork(dir, bin, rounds, hz, work)
	}
	if accuracy {
		return measureAccuracy(dir, bin, rounds, requests, clients, hz, hogs)
	}
	srv, addr, err := startServer(bin)
	if err != nil {
		return err
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	pid := srv.Process.Pid
	target := profile.Target{Name: "hotserver", Lister: profile.ProcessTree(pid)}
	switch by {
	case "pids":
	case "cgroup":
		cg, err := ownCgroup(pid)
		if err != nil {
			return err
		}
		// the server must be gone before its cgroup can go: kill it first
		defer func() { srv.Process.Kill(); srv.Wait(); os.Remove(cg) }()
		target = profile.Target{Name: "hotserver", Cgroup: cg}
	default:
		return fmt.Errorf("-by must be pids or cgroup, got %q", by)
	}
	load(addr, clients, requests/3) // warm-up, not kept
	f, err := os.Create(filepath.Join(dir, "runs.jsonl"))
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for r := range rounds {
		for seq, mode := range []string{"off", "perf", "perf", "off"} {
			res, err := run(addr, pid, target, mode, requests, clients, hz)
			if err != nil {
				return err
			}
			res.Round, res.Seq = r, seq
			if err := enc.Encode(res); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "round %d %-4s %6.1f µs/req (%d samples, load %.1f)\n", r, mode, res.UsPerReq, res.Samples, res.Load1)
		}
	}
	return writeMeta(dir, rounds, requests, clients, hz, by)
}

// startServer starts the hot server's arm A and returns it once it
// listens, with its address; the caller kills it.
func startServer(bin string) (*exec.Cmd, string, error) {
	srv := exec.Command(bin, "-arm", "A")
	stdout, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		return nil, "", err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		srv.Process.Kill()
		srv.Wait()
		return nil, "", fmt.Errorf("hot server: %v", err)
	}
	return srv, strings.TrimSpace(strings.TrimPrefix(line, "listening ")), nil
}

// measureWork runs the CPU-bound work in a fresh process per run, perf
// attached (and enabled) before the work starts when the mode says so:
// what sampling costs a target that never switches context.
func measureWork(dir, bin string, rounds, hz, work int) error {
	f, err := os.Create(filepath.Join(dir, "runs.jsonl"))
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for r := range rounds {
		for seq, mode := range []string{"off", "perf", "perf", "off"} {
			res, err := runWork(bin, mode, hz, work)
			if err != nil {
				return err
			}
			res.Round, res.Seq = r, seq
			if err := enc.Encode(res); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "round %d %-4s %8.0f µs of CPU for the work (%d samples, load %.1f)\n", r, mode, res.CPUUs, res.Samples, res.Load1)
		}
	}
	return writeMeta(dir, rounds, int64(work), 0, hz, "pids, CPU-bound work")
}

func runWork(bin, mode string, hz, work int) (result, error) {
	cmd := exec.Command(bin, "-work", strconv.Itoa(work))
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	defer cmd.Wait()
	var rec *profile.PerfRecording
	if mode == "perf" {
		var err error
		rec, err = profile.StartPerf(context.Background(), profile.Target{Name: "work", Lister: profile.PIDs(cmd.Process.Pid)}, profile.PerfOptions{Hz: hz})
		if err != nil {
			cmd.Process.Kill()
			return result{}, err
		}
	}
	t0 := time.Now()
	fmt.Fprintln(in, "go")
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return result{}, fmt.Errorf("work: %v", err)
	}
	us, _ := strconv.ParseFloat(strings.TrimSpace(line), 64)
	res := result{Mode: mode, Requests: int64(work), CPUUs: us, UsPerReq: us / float64(work), WallMs: float64(time.Since(t0).Microseconds()) / 1e3, Load1: load1()}
	if rec != nil {
		p, err := rec.Stop()
		if err != nil {
			return result{}, err
		}
		res.Samples = p.Samples
	}
	return res, nil
}

// ownCgroup moves pid into a new cgroup of the hierarchy that has the
// perf_event controller (cgroup v2 here; on this kind of machine the v1
// controllers that limit processes are elsewhere, so nothing else changes
// for the server).
func ownCgroup(pid int) (string, error) {
	mnt := "/sys/fs/cgroup/unified"
	if _, err := os.Stat(filepath.Join(mnt, "cgroup.procs")); err != nil {
		mnt = "/sys/fs/cgroup"
	}
	dir := filepath.Join(mnt, fmt.Sprintf("benchbook-overhead-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		os.Remove(dir)
		return "", err
	}
	return dir, nil
}

func run(addr string, pid int, target profile.Target, mode string, requests int64, clients, hz int) (result, error) {
	var rec *profile.PerfRecording
	if mode == "perf" {
		var err error
		rec, err = profile.StartPerf(context.Background(), target, profile.PerfOptions{Hz: hz})
		if err != nil {
			return result{}, err
		}
	}
	c0, t0 := cpuUs(pid), time.Now()
	n := load(addr, clients, requests)
	c1, wall := cpuUs(pid), time.Since(t0)
	res := result{Mode: mode, Requests: n, CPUUs: c1 - c0, UsPerReq: (c1 - c0) / float64(n), WallMs: float64(wall.Microseconds()) / 1e3, Load1: load1()}
	if rec != nil {
		p, err := rec.Stop()
		if err != nil {
			return result{}, err
		}
		res.Samples = p.Samples
	}
	return res, nil
}

// load sends requests until n have succeeded (closed loop, loopback).
func load(addr string, clients int, n int64) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr}
	var done atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
				resp, err := cl.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 && done.Add(1) >= n {
					cancel()
				}
			}
		})
	}
	wg.Wait()
	return min(done.Load(), n)
}

// cpuUs is the CPU time of pid's live threads in µs (their schedstat).
func cpuUs(pid int) float64 {
	d, _ := procfs.ThreadsCPU(pid)
	return float64(d.Nanoseconds()) / 1e3
}

func load1() float64 {
	l, _ := hostinfo.LoadAvg()
	return l[0]
}

func writeMeta(dir string, rounds int, requests int64, clients, hz int, by string) error {
	perfV, _ := exec.Command("perf", "version").Output()
	kernel, _ := procfs.Sysctl("kernel.osrelease")
	meta := map[string]any{
		"when": time.Now().UTC().Format(time.RFC3339), "go": runtime.Version(), "cpus": runtime.NumCPU(),
		"kernel": kernel, "perf": strings.TrimSpace(string(perfV)),
		"rounds": rounds, "requests": requests, "clients": clients, "hz": hz, "event": profile.Event, "by": by,
	}
	b, _ := json.MarshalIndent(meta, "", "  ")
	return os.WriteFile(filepath.Join(dir, "meta.json"), append(b, '\n'), 0o644)
}

// printTable reads runs.jsonl and meta.json and prints, per round, the
// target's CPU per request with and without perf and their ratio (the two
// perf runs of an ABBA round against its two plain ones, so a drift
// through the round cancels), then the geometric mean of the ratios.
func printTable(w io.Writer, dir string) error {
	var meta map[string]any
	if b, err := os.ReadFile(filepath.Join(dir, "meta.json")); err == nil {
		json.Unmarshal(b, &meta)
	}
	f, err := os.Open(filepath.Join(dir, "runs.jsonl"))
	if err != nil {
		return err
	}
	defer f.Close()
	byRound := map[int]map[string][]float64{}
	loads := map[int][]float64{}
	dec := json.NewDecoder(f)
	for {
		var r result
		if err := dec.Decode(&r); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		if byRound[r.Round] == nil {
			byRound[r.Round] = map[string][]float64{}
		}
		byRound[r.Round][r.Mode] = append(byRound[r.Round][r.Mode], r.UsPerReq)
		loads[r.Round] = append(loads[r.Round], r.Load1)
	}
	unit := "µs/req"
	if meta["clients"] == 0.0 {
		unit = "µs/unit"
		fmt.Fprintf(w, "Target: CPU-bound work, hotA(1000) %v times in a fresh process per run (no context switches), perf %v at %v Hz on its pid, on %v; %v, %v CPUs.\n\n",
			meta["requests"], meta["event"], meta["hz"], meta["kernel"], meta["go"], meta["cpus"])
	} else {
		fmt.Fprintf(w, "Target: the hot server (arm A), %v requests per run, %v clients, perf %v at %v Hz, found by %v, on %v; %v, %v CPUs.\n\n",
			meta["requests"], meta["clients"], meta["event"], meta["hz"], meta["by"], meta["kernel"], meta["go"], meta["cpus"])
	}
	fmt.Fprintf(w, "| round | %s without perf | %s with perf | ratio | load average |\n", unit, unit)
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	var logs []float64
	rounds := make([]int, 0, len(byRound))
	for r := range byRound {
		rounds = append(rounds, r)
	}
	slices.Sort(rounds)
	for _, r := range rounds {
		off, on := mean(byRound[r]["off"]), mean(byRound[r]["perf"])
		ratio := on / off
		logs = append(logs, math.Log(ratio))
		fmt.Fprintf(w, "| %d | %.1f | %.1f | %.3f | %.1f-%.1f |\n", r+1, off, on, ratio, slices.Min(loads[r]), slices.Max(loads[r]))
	}
	gm := math.Exp(mean(logs))
	fmt.Fprintf(w, "\nOverhead on the target's CPU: **%+.1f %%** (geometric mean of %d ABBA rounds; rounds from %+.1f %% to %+.1f %%).\n",
		100*(gm-1), len(logs), 100*(math.Exp(slices.Min(logs))-1), 100*(math.Exp(slices.Max(logs))-1))
	return nil
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
