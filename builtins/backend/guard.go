package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/runtime/redact"
)

// This file holds the run guards of targets: a process or cluster passed in
// a workload's observe list is watched through the run (guard.Watcher) for
// an exit, a kill, a restart, crashed backends and error lines in its log;
// .watch(count = {...}, allow = [...]) adds log counters and an allow-list.

var (
	_ guard.Watcher = (*procHandle)(nil)
	_ guard.Watcher = (*pgHandle)(nil)
	_ guard.Watcher = (*watched)(nil)
)

// Watch watches the process through a run.
func (p *procHandle) Watch(ctx context.Context, t0 time.Time) func() []guard.Trip {
	return p.watch(ctx, t0, guard.LogRules{})
}

func (p *procHandle) watch(ctx context.Context, t0 time.Time, rules guard.LogRules) func() []guard.Trip {
	p.mu.Lock()
	cmd, done, stopping, group := p.cmd, p.done, p.stopping, p.group
	p.mu.Unlock()
	src := "process " + filepath.Base(p.spec.argv[0])
	if cmd == nil || isClosed(done) {
		return guard.NotRunning(src)
	}
	pid := cmd.Process.Pid
	src += fmt.Sprintf(" (pid %d)", pid)
	ended := guard.WatchExit(ctx, done, func() guard.Trip {
		return guard.ExitTrip(src, guard.Since(t0), pid, cmd.ProcessState, stopping.Load())
	})
	logs := guard.FollowLog(ctx, t0, src, rules, p.lines())
	ooms := oomWatch(group, src, t0)
	return func() []guard.Trip {
		trips := append(append(ooms(), ended()...), logs()...)
		if now := p.pid(); now != 0 && now != pid {
			trips = append(trips, guard.Trip{At: guard.Since(t0), Source: src, Kind: "restarted", Fatal: true,
				Evidence: fmt.Sprintf("pid %d is now pid %d", pid, now)})
		}
		return trips
	}
}

// lines follows the process's output from now on.
func (p *procHandle) lines() guard.Lines {
	p.mu.Lock()
	log := p.log
	p.mu.Unlock()
	return follow(log)
}

// follow gives the lines a log gets from now on, for a guard; none when
// there is no log.
func follow(log *logRing) guard.Lines {
	if log == nil {
		return func() []string { return nil }
	}
	_, seq := log.since(math.MaxInt64)
	return func() []string {
		var lines []string
		lines, seq = log.since(seq)
		return lines
	}
}

// Watch watches the cluster through a run: its postmaster's exit, its
// restart (pg_postmaster_start_time), its log (crashed backends, errors).
func (h *pgHandle) Watch(ctx context.Context, t0 time.Time) func() []guard.Trip {
	return h.watch(ctx, t0, guard.LogRules{})
}

func (h *pgHandle) watch(ctx context.Context, t0 time.Time, rules guard.LogRules) func() []guard.Trip {
	const src = "postgres"
	start0, err := h.startTime(ctx)
	if err != nil {
		return func() []guard.Trip {
			return []guard.Trip{{Source: src, Kind: "unreachable", Fatal: true, Evidence: redact.String(err.Error())}}
		}
	}
	ended := func() []guard.Trip { return nil }
	logs := func() []guard.Trip { return nil }
	ooms := func() []guard.Trip { return nil }
	h.mu.Lock()
	if c := h.c; c != nil && c.cmd != nil {
		ooms = oomWatch(c.group, src, t0) // a backend killed inside the limit, the postmaster living on
		cmd, pid := c.cmd, c.cmd.Process.Pid
		ended = guard.WatchExit(ctx, c.done, func() guard.Trip {
			return guard.ExitTrip(fmt.Sprintf("postgres (postmaster pid %d)", pid), guard.Since(t0), pid, cmd.ProcessState, false)
		})
		logs = guard.FollowLog(ctx, t0, src, rules, followFile(c.logPath()))
	} else if c != nil && c.img != nil {
		ended = c.img.watch(ctx, t0, c.limits)
		logs = guard.FollowLog(ctx, t0, src, rules, followFile(c.logPath()))
	}
	h.mu.Unlock()
	return func() []guard.Trip {
		trips := append(append(ended(), logs()...), ooms()...)
		if len(trips) > 0 && trips[0].Kind != "log_errors" && trips[0].Kind != "crashed_backend" {
			return trips // the postmaster is gone: nothing to ask
		}
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		start1, err := h.startTime(qctx)
		switch {
		case err != nil:
			trips = append(trips, guard.Trip{At: guard.Since(t0), Source: src, Kind: "unreachable", Fatal: true, Evidence: redact.String(err.Error())})
		case !start1.Equal(start0):
			trips = append(trips, guard.Trip{At: guard.Since(t0), Source: src, Kind: "restarted", Fatal: true,
				Evidence: fmt.Sprintf("pg_postmaster_start_time went from %s to %s", start0.Format(time.RFC3339Nano), start1.Format(time.RFC3339Nano))})
		}
		return trips
	}
}

// startTime asks the server when its postmaster (re)started: a crash of a
// backend makes the postmaster reinitialise, which changes it.
func (h *pgHandle) startTime(ctx context.Context) (time.Time, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := h.conn(cctx)
	if err != nil {
		return time.Time{}, err
	}
	defer conn.Close(context.Background())
	var t time.Time
	err = conn.QueryRow(cctx, monitorTag+"SELECT pg_postmaster_start_time()").Scan(&t)
	return t, err
}

// lines follows the cluster's log from now on (nothing for a server
// attached by DSN: its log is not ours to read).
func (h *pgHandle) lines() guard.Lines {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.c == nil {
		return func() []string { return nil }
	}
	return followFile(h.c.logPath())
}

// followFile returns the complete lines appended to path since the last call,
// starting from its current end.
func followFile(path string) guard.Lines {
	var offset int64
	if fi, err := os.Stat(path); err == nil {
		offset = fi.Size()
	}
	return func() []string {
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return nil
		}
		data, _ := io.ReadAll(io.LimitReader(f, 64<<20))
		end := strings.LastIndexByte(string(data), '\n')
		if end < 0 {
			return nil
		}
		offset += int64(end + 1)
		return strings.Split(string(data[:end]), "\n")
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// guardedTarget is a process or a cluster, as .watch() wraps it.
type guardedTarget interface {
	starlark.Value
	StartObserving(ctx context.Context) (func(requests int64) (map[string]float64, error), error)
	watch(ctx context.Context, t0 time.Time, rules guard.LogRules) func() []guard.Trip
	lines() guard.Lines
}

// watched is the value of .watch(count = {...}, allow = [...]): the target
// with log rules, to pass in observe = [...] instead of the target.
type watched struct {
	target guardedTarget
	rules  guard.LogRules
}

func (w *watched) String() string        { return fmt.Sprintf("<watched %s>", w.target.String()) }
func (w *watched) Type() string          { return "watched" }
func (w *watched) Freeze()               {}
func (w *watched) Truth() starlark.Bool  { return true }
func (w *watched) Hash() (uint32, error) { return 0, errors.New("unhashable type: watched") }

// StartObserving gives the target's figures plus, for each count pattern,
// NAME (lines over the window) and NAME_per_req.
func (w *watched) StartObserving(ctx context.Context) (func(requests int64) (map[string]float64, error), error) {
	stop, err := w.target.StartObserving(ctx)
	if err != nil {
		return nil, err
	}
	count := guard.CountLog(ctx, w.rules, w.target.lines())
	return func(requests int64) (map[string]float64, error) {
		figs, err := stop(requests)
		if figs == nil {
			figs = map[string]float64{}
		}
		for k, v := range count(requests) {
			figs[k] = v
		}
		return figs, err
	}, nil
}

// Watches is the target the rules apply to: observe = [pg.watch(...)]
// observes pg.
func (w *watched) Watches() any { return w.target }

func (w *watched) Watch(ctx context.Context, t0 time.Time) func() []guard.Trip {
	return w.target.watch(ctx, t0, w.rules)
}

// watchMethod is .watch(count = {name: regex}, allow = [regex]) on a process
// or a cluster.
func watchMethod(t guardedTarget, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var count *starlark.Dict
	var allow *starlark.List
	if err := starlark.UnpackArgs(name, args, kwargs, "count?", &count, "allow?", &allow); err != nil {
		return nil, err
	}
	w := &watched{target: t, rules: guard.LogRules{Count: map[string]*regexp.Regexp{}}}
	if count != nil {
		for _, kv := range count.Items() {
			k, ok1 := starlark.AsString(kv[0])
			v, ok2 := starlark.AsString(kv[1])
			if !ok1 || !ok2 || k == "" {
				return nil, fmt.Errorf("%s: count must map names to regular expressions, got %s: %s", name, kv[0].Type(), kv[1].Type())
			}
			re, err := regexp.Compile(v)
			if err != nil {
				return nil, fmt.Errorf("%s: count[%q]: %w", name, k, err)
			}
			w.rules.Count[k] = re
		}
	}
	if allow != nil {
		for i := range allow.Len() {
			v, ok := starlark.AsString(allow.Index(i))
			if !ok {
				return nil, fmt.Errorf("%s: allow[%d] must be a regular expression string, got %s", name, i, allow.Index(i).Type())
			}
			re, err := regexp.Compile(v)
			if err != nil {
				return nil, fmt.Errorf("%s: allow[%d]: %w", name, i, err)
			}
			w.rules.Allow = append(w.rules.Allow, re)
		}
	}
	return w, nil
}
