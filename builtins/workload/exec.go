package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/child"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime"
)

// execArgs are workload.exec's arguments.
type execArgs struct {
	cmd     starlark.Value
	runs    int
	warmup  int
	timeout starval.PositiveDuration // 0: none
	label   string
	observe *starlark.List
	obs     []loadgen.Observer
	profile profileArg
	prof    *profiler // nil without profile
}

// execSample is one whole-process run.
type execSample struct {
	wall   time.Duration
	cpu    time.Duration
	user   time.Duration
	sys    time.Duration
	maxRSS int64 // KB
	class  string
}

func execBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	a := execArgs{runs: 10, warmup: 1}
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "cmd", &a.cmd, "runs?", &a.runs,
		"warmup?", &a.warmup, "timeout??", &a.timeout, "label?", &a.label, "observe?", &a.observe, "profile?", &a.profile, "profile_hz?", &a.profile.hz); err != nil {
		return nil, err
	}
	var err error
	if a.obs, err = observers(b.Name(), a.observe); err != nil {
		return nil, err
	}
	a.obs = withBox(th, a.obs, a.observe)
	a.obs = withTargetGuards(th, a.obs, nil) // a command's traffic has no address we can see
	argv, err := a.argv(b.Name())
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		return nil, fmt.Errorf("%s: cmd: %w", b.Name(), err)
	}
	if a.label == "" {
		a.label = strings.Join(argv, " ")
	}
	if a.prof, err = a.startProfile(b.Name(), th, argv); err != nil {
		return nil, err
	}
	r := a.measure(th, argv, time.Duration(a.timeout))
	if err := a.prof.attach(r); err != nil {
		return nil, err
	}
	// After the runs: a file the command writes is what the next run finds.
	for _, in := range runtime.CommandInputs(th, argv, "") {
		runtime.AddInput(th, in)
	}
	return r, nil
}

func (a *execArgs) argv(name string) ([]string, error) {
	if a.runs <= 0 || a.warmup < 0 {
		return nil, fmt.Errorf("%s: runs must be > 0 and warmup >= 0, got runs=%d warmup=%d", name, a.runs, a.warmup)
	}
	switch v := a.cmd.(type) {
	case starlark.String:
		if strings.TrimSpace(string(v)) == "" {
			return nil, fmt.Errorf("%s: cmd is empty", name)
		}
		return []string{"/bin/sh", "-c", string(v)}, nil
	case *starlark.List, starlark.Tuple:
		l := v.(starlark.Indexable)
		out := make([]string, l.Len())
		for i := range out {
			s, ok := starlark.AsString(l.Index(i))
			if !ok {
				return nil, fmt.Errorf("%s: cmd[%d] must be a string, got %s", name, i, l.Index(i).Type())
			}
			out[i] = s
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%s: cmd is empty", name)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: cmd must be a string (run by sh) or a list of arguments, got %s", name, a.cmd.Type())
}

// stepOf is the experiment's step ("pair 2/4 B  ") before a progress line.
func stepOf(th *starlark.Thread) string {
	if s := runtime.Step(th); s != "" {
		return s + "  "
	}
	return ""
}

// measure runs warmup + runs times, keeping the measured runs. The
// observers and the run guards (loadgen.StartWatch: a watched process or
// cluster that dies, the host's disk, memory pressure, swapping) watch the
// measured runs as they watch a load generator's window: a fatal trip
// makes the run invalid, and compare refuses it.
func (a *execArgs) measure(th *starlark.Thread, argv []string, timeout time.Duration) *Run {
	ctx := runtime.Context(th)
	stderr := runtime.Stderr(th)
	hist := newHist()
	r := newRun("exec", loadgen.Spec{Label: a.label}, &loadgen.Result{Errors: map[string]int64{}})
	var start time.Time
	var w *loadgen.Watch
	for i := range a.warmup + a.runs {
		if i == a.warmup {
			if err := a.prof.open(); err != nil {
				r.d.Warnings = append(r.d.Warnings, "profile: "+err.Error())
			}
			start = time.Now()
			w = loadgen.StartWatch(ctx, a.obs, nil, start, true, nil) // the runs start after it: no request to align
		}
		fmt.Fprintf(stderr, "%s%s: run %d/%d%s\n", stepOf(th), a.label, i+1, a.warmup+a.runs, map[bool]string{true: " (warmup)"}[i < a.warmup])
		s := runOnce(ctx, argv, timeout)
		if ctx.Err() != nil {
			r.d.Interrupted = true
			break
		}
		if i >= a.warmup {
			r.addSample(s)
		}
	}
	a.prof.close()
	if w != nil {
		var warnings []string
		r.d.Observed, r.d.Trips, warnings = w.Stop(r.d.Count)
		r.d.Warnings = append(append(r.d.Warnings, warnings...), loadgen.TripWarnings(r.d.Trips)...)
		r.noteBox()
	} else {
		start = time.Now() // interrupted in warmup: nothing measured
	}
	r.d.Hist = hist
	for _, w := range r.d.WallMs {
		_ = r.d.Hist.RecordValue(max(int64(w*1000), histMin))
	}
	r.d.Measured = time.Since(start)
	if r.d.Interrupted {
		r.d.Warnings = append(r.d.Warnings, "interrupted: figures cover only the runs finished before Ctrl-C")
	}
	r.d.Warnings = append(r.d.Warnings, execWarnings(r.d.WallMs)...)
	r.d.Windows = []windowStat{}
	return r
}

func (r *Run) addSample(s execSample) {
	if s.class != "" {
		r.d.Errors[s.class]++
		return
	}
	r.d.Count++
	r.d.WallMs = append(r.d.WallMs, float64(s.wall.Microseconds())/1000)
	r.d.CPUMs = append(r.d.CPUMs, float64(s.cpu.Microseconds())/1000)
	r.d.UserMs = append(r.d.UserMs, float64(s.user.Microseconds())/1000)
	r.d.SysMs = append(r.d.SysMs, float64(s.sys.Microseconds())/1000)
	r.d.MaxRSSKb = append(r.d.MaxRSSKb, s.maxRSS)
}

// runOnce starts the command in its own process group (killed whole on
// timeout or Ctrl-C) and reads its rusage.
func runOnce(ctx context.Context, argv []string, timeout time.Duration) execSample {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	cmd.Cancel = func() error { child.KillGroup(cmd.Process.Pid, syscall.SIGKILL); return nil }
	cmd.WaitDelay = time.Second
	t0 := time.Now()
	err := child.Run(cmd)
	s := execSample{wall: time.Since(t0)}
	if ru, ok := usage(cmd); ok {
		s.user, s.sys = time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
		s.cpu = s.user + s.sys
		s.maxRSS = ru.Maxrss
	}
	s.class = exitClass(ctx, err)
	return s
}

func usage(cmd *exec.Cmd) (*syscall.Rusage, bool) {
	if cmd.ProcessState == nil {
		return nil, false
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return ru, ok
}

func exitClass(ctx context.Context, err error) string {
	if err == nil {
		return ""
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "timeout"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "signal " + ws.Signal().String()
		}
		return fmt.Sprintf("exit %d", ee.ExitCode())
	}
	return "start failed"
}
