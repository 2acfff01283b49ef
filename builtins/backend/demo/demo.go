// Package demo is backend.demo: it starts the embedded demo target, a small
// search API over SQLite (builtins/internal/demotarget), as a child process,
// so notebooks have something real to measure on a machine with only Go, and
// is the notebook's handle to it.
//
//	backend.demo(index = False, cache = False, rows = 100000) -> demo
//	    .url          "http://127.0.0.1:PORT"; GET /search?q=t0042&limit=20,
//	                  GET /items/ID (an item and its likes), POST /items/ID/like
//	                  (a write: one more like, kept in memory)
//	    .pid          the child's process id
//	    .stop()       ends it (it also ends with benchbook)
//	    .cpu()        the child's user+sys CPU so far, in seconds
//	    .rss()        its resident memory, in KB
//
// index = True creates a covering index for the search (without it every
// search scans the table); cache = True keeps responses in memory. A demo
// handle can be passed to workload.http(observe = [...]): the run then has
// server_cpu_us_per_req.
package demo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/child"
	"github.com/benchbook/benchbook/builtins/internal/demotarget"
	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/procfs"
)

// Builtin is backend.demo(**options).
var Builtin = starlark.NewBuiltin("backend.demo", start)

// readyTimeout bounds the child's startup, which builds the database the
// first time (a few seconds on a slow box).
const readyTimeout = 60 * time.Second

func start(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	o := demotarget.Options{Rows: demotarget.DefaultRows}
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "index?", &o.Index, "cache?", &o.Cache, "rows?", &o.Rows); err != nil {
		return nil, err
	}
	if o.Rows <= 0 || o.Rows > 10_000_000 {
		return nil, fmt.Errorf("%s: rows must be in 1..10000000, got %d", b.Name(), o.Rows)
	}
	o.Data = demotarget.DataDir()
	h, err := launch(runtime.Context(th), o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	runtime.AtExit(th, h.kill)
	runtime.SessionValue(th, guard.TargetsKey, guard.NewTargets).Add(h)
	runtime.AddInput(th, runtime.Input{Kind: "server", Name: describe(o)})
	return h, nil
}

// describe is the target's provenance line: what the demo serves, with
// which options (not its port, which differs from one start to the next).
func describe(o demotarget.Options) string {
	return fmt.Sprintf("demo: benchbook's embedded search API over SQLite, run by this benchbook (index = %s, cache = %s, rows = %d)",
		pyBool(o.Index), pyBool(o.Cache), o.Rows)
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// launch re-executes this binary in its "__demo" mode (demotarget.Mode) and waits for
// the line with its address.
func launch(ctx context.Context, o demotarget.Options) (*Handle, error) {
	cmd, err := child.ModeCommand(demotarget.Mode.Arg, o.Args()...)
	if err != nil {
		return nil, fmt.Errorf("start demo: %w", err)
	}
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4096}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := child.Start(cmd); err != nil {
		return nil, fmt.Errorf("start demo: %w", err)
	}
	h := &Handle{cmd: cmd, opts: o, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(h.done) }()
	url, err := h.awaitReady(ctx, out)
	if err != nil {
		h.kill()
		return nil, fmt.Errorf("%w %s", err, strings.TrimSpace(stderr.String()))
	}
	h.url = url
	return h, nil
}

func (h *Handle) awaitReady(ctx context.Context, out io.Reader) (string, error) {
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case l, ok := <-line:
		if url, found := strings.CutPrefix(l, "listening "); ok && found {
			return url, nil
		}
		<-h.done
		return "", errors.New("demo exited before it was ready:")
	case <-time.After(readyTimeout):
		return "", fmt.Errorf("demo not ready after %s", readyTimeout)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

type limitedWriter struct {
	mu sync.Mutex
	w  io.Writer
	n  int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		_, _ = l.w.Write(p[:k])
	}
	return len(p), nil
}

// Handle is a running demo target: Starlark type "demo".
type Handle struct {
	cmd  *exec.Cmd
	opts demotarget.Options
	url  string
	done chan struct{}
	once sync.Once
	ours atomic.Bool // set by kill: the demo's end is then no guard trip of a run
}

// kill stops the child's whole process group and waits for it.
func (h *Handle) kill() {
	h.once.Do(func() {
		h.ours.Store(true)
		child.KillGroup(h.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-h.done:
		case <-time.After(5 * time.Second):
		}
	})
}

func (h *Handle) String() string {
	return fmt.Sprintf("demo(url=%s, index=%v, cache=%v, rows=%d)", h.url, h.opts.Index, h.opts.Cache, h.opts.Rows)
}
func (h *Handle) Type() string          { return "demo" }
func (h *Handle) Freeze()               {}
func (h *Handle) Truth() starlark.Bool  { return true }
func (h *Handle) Hash() (uint32, error) { return starlark.String(h.url).Hash() }

func (h *Handle) AttrNames() []string {
	return []string{"cache", "cpu", "index", "pid", "rows", "rss", "stop", "url"}
}

func (h *Handle) Attr(name string) (starlark.Value, error) {
	switch name {
	case "url":
		return starlark.String(h.url), nil
	case "pid":
		return starlark.MakeInt(h.cmd.Process.Pid), nil
	case "index":
		return starlark.Bool(h.opts.Index), nil
	case "cache":
		return starlark.Bool(h.opts.Cache), nil
	case "rows":
		return starlark.MakeInt(h.opts.Rows), nil
	case "stop":
		return h.method("stop", func() (starlark.Value, error) { h.kill(); return starlark.None, nil }), nil
	case "cpu":
		return h.method("cpu", func() (starlark.Value, error) {
			d, err := procCPU(h.cmd.Process.Pid)
			return starlark.Float(d.Seconds()), err
		}), nil
	case "rss":
		return h.method("rss", func() (starlark.Value, error) {
			kb, err := procRSS(h.cmd.Process.Pid)
			return starlark.MakeInt64(kb), err
		}), nil
	}
	return nil, nil
}

func (h *Handle) method(name string, fn func() (starlark.Value, error)) *starlark.Builtin {
	return starlark.NewBuiltin("demo."+name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
			return nil, err
		}
		v, err := fn()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		return v, nil
	})
}

// StartObserving samples the child's CPU and resident size around a
// workload's measurement window (workload.Observer): the run gets
// server_cpu_us_per_req and server_rss_peak_kb (the largest resident size
// sampled every 100 ms), as a backend.process target gives.
func (h *Handle) StartObserving(ctx context.Context) (func(int64) (map[string]float64, error), error) {
	pid := h.cmd.Process.Pid
	before, err := procCPU(pid)
	if err != nil {
		return nil, err
	}
	peak := rssNow(pid)
	stop := guard.Every(ctx, 100*time.Millisecond, func() { peak = max(peak, rssNow(pid)) })
	return func(requests int64) (map[string]float64, error) {
		stop()
		after, err := procCPU(pid)
		if err != nil {
			return nil, err
		}
		figs := map[string]float64{
			"server_cpu_s":       (after - before).Seconds(),
			"server_rss_peak_kb": float64(max(peak, rssNow(pid))),
		}
		if requests > 0 {
			figs["server_cpu_us_per_req"] = float64((after - before).Microseconds()) / float64(requests)
		}
		return figs, nil
	}, nil
}

// procCPU is utime + stime of pid.
func procCPU(pid int) (time.Duration, error) {
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return 0, fmt.Errorf("read cpu: %w", err)
	}
	return st.CPU(), nil
}

// rssNow is pid's resident size, 0 once it is gone.
func rssNow(pid int) int64 {
	kb, _ := procRSS(pid)
	return kb
}

// procRSS is pid's resident size in KiB (procfs: /proc/PID/stat).
func procRSS(pid int) (int64, error) {
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return 0, fmt.Errorf("read rss: %w", err)
	}
	return st.RSSKB(), nil
}
