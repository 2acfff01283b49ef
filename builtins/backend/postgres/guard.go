package postgres

import (
	"context"
	"fmt"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/runtime/redact"
)

// The run guards of a cluster: its postmaster's exit, its restart
// (pg_postmaster_start_time), its log (crashed backends, errors), an OOM
// kill inside its limits group, or the container it runs in.

// Watch watches the cluster through a run: its postmaster's exit, its
// restart (pg_postmaster_start_time), its log (crashed backends, errors).
func (h *Handle) Watch(ctx context.Context, t0 time.Time) func() []guard.Trip {
	return h.WatchLog(ctx, t0, guard.LogRules{})
}

// WatchLog is Watch with rules for the lines of the cluster's log.
func (h *Handle) WatchLog(ctx context.Context, t0 time.Time, rules guard.LogRules) func() []guard.Trip {
	const src = "postgres"
	// The log is read from its length now, before anything slow: a line the
	// window's first requests make is the run's.
	ended := func() []guard.Trip { return nil }
	logs := func() []guard.Trip { return nil }
	ooms := func() []guard.Trip { return nil }
	h.mu.Lock()
	if c := h.c; c != nil {
		if e, o := c.at().watch(ctx, t0, c); e != nil {
			ended = e
			if o != nil {
				ooms = o
			}
			logs = guard.FollowLog(ctx, t0, src, rules, kit.FollowFile(c.logPath()))
		}
	}
	h.mu.Unlock()
	// The postmaster's start time, asked over a new connection (tens of ms
	// on a loaded box), in the background: a restart between now and its
	// answer is in the log all the same (the crash that caused it).
	type started struct {
		t   time.Time
		err error
	}
	first := make(chan started, 1)
	go func() {
		t, err := h.startTime(context.WithoutCancel(ctx)) // an interrupt is no unreachable server
		first <- started{t, err}
	}()
	return func() []guard.Trip {
		trips := append(append(ended(), logs()...), ooms()...)
		start0 := <-first
		if start0.err != nil {
			return append(trips, guard.Trip{Source: src, Kind: "unreachable", Fatal: true, Evidence: redact.String(start0.err.Error())})
		}
		if len(trips) > 0 && trips[0].Kind != "log_errors" && trips[0].Kind != "crashed_backend" {
			return trips // the postmaster is gone: nothing to ask
		}
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		start1, err := h.startTime(qctx)
		switch {
		case err != nil:
			trips = append(trips, guard.Trip{At: guard.Since(t0), Source: src, Kind: "unreachable", Fatal: true, Evidence: redact.String(err.Error())})
		case !start1.Equal(start0.t):
			trips = append(trips, guard.Trip{At: guard.Since(t0), Source: src, Kind: "restarted", Fatal: true,
				Evidence: fmt.Sprintf("pg_postmaster_start_time went from %s to %s", start0.t.Format(time.RFC3339Nano), start1.Format(time.RFC3339Nano))})
		}
		return trips
	}
}

// startTime asks the server when its postmaster (re)started: a crash of a
// backend makes the postmaster reinitialise, which changes it.
func (h *Handle) startTime(ctx context.Context) (time.Time, error) {
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

// Lines follows the cluster's log from now on (nothing for a server
// attached by DSN: its log is not ours to read).
func (h *Handle) Lines() guard.Lines {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.c == nil {
		return func() []string { return nil }
	}
	return kit.FollowFile(h.c.logPath())
}

// Watched: a cluster of the notebook's own that is not stopped.
func (h *Handle) Watched() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.c != nil && h.pool != nil
}

// Alive: its postmaster (or its container) runs.
func (h *Handle) Alive() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.c != nil && h.c.running()
}

// Serves: the handle itself, its port on this machine, or its socket
// directory.
func (h *Handle) Serves(d guard.Dest) bool {
	if d.Target == starlark.Value(h) {
		return true
	}
	h.mu.Lock()
	c := h.c
	h.mu.Unlock()
	if c == nil {
		return false
	}
	return d.LocalPort(c.port) || d.Socket != "" && d.Socket == c.sockDir
}
