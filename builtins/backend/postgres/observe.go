package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/handle"
)

// sampleEvery is how often wait events are sampled during a window.
const sampleEvery = 200 * time.Millisecond

// StartObserving begins a measurement window on the server; stop ends it and
// returns the figures over it, per request where that makes sense:
//
//	db_cpu_us_per_req      CPU of client backends (µs) per request, from /proc
//	db_cpu_us_bg_per_req   CPU of the postmaster and background workers
//	buffers_per_req        shared blocks hit + read (pg_stat_statements)
//	shared_read_per_req    shared blocks read
//	wal_bytes_per_req      WAL bytes by LSN difference
//	plan_exec_ms_per_req   planning + execution time
//	statements_per_req     statements executed
//	walwrite_waiters_max   most client backends seen waiting on WALWrite
//	lock_waiters_max       most client backends seen waiting on a lock
//	active_backends_max    most active client backends seen
//	wait_samples           samples taken of pg_stat_activity
//
// plus the window's totals (db_cpu_us, db_cpu_us_bg, buffers, wal_bytes,
// plan_exec_ms, statements); a cluster with limits or in an image adds its
// cgroup's figures (server_cpu_cores, mem_anon_kb, ...: cgroup.Observe).
// The workload package calls it through an
// interface of its own.
func (h *Handle) StartObserving(ctx context.Context) (handle.Stop, error) {
	open, _, err := h.PrepareObserving(ctx)
	if err != nil {
		return nil, err
	}
	return open()
}

// PrepareObserving connects before the window (handle.Preparer): opening
// it is then the first snapshot alone.
func (h *Handle) PrepareObserving(ctx context.Context) (open func() (handle.Stop, error), cancel func(), err error) {
	conn, err := h.conn(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: observe: %w", err)
	}
	postmaster := h.serverPID(ctx, conn)
	// The cgroup too: a cluster in an image finds it from its container's
	// pid, which the engine gives, slowly on a loaded box.
	group := h.cgroup()
	open = func() (handle.Stop, error) { return h.openWindow(ctx, conn, postmaster, group) }
	cancel = func() { conn.Close(context.Background()) }
	return open, cancel, nil
}

// openWindow takes the window's first snapshot over conn, which it owns
// from now on, and group's (nil: none).
func (h *Handle) openWindow(ctx context.Context, conn *pgx.Conn, postmaster int, group *cgroup.Group) (handle.Stop, error) {
	exclude := map[int]bool{int(conn.PgConn().PID()): true}
	before, err := collect(ctx, conn, postmaster, exclude)
	if err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("postgres: observe: %w", err)
	}
	// Queries never run under a context that gets cancelled: pgx closes a
	// connection whose query is interrupted, and the last snapshot needs it.
	quiet := context.WithoutCancel(ctx)
	quit := make(chan struct{})
	w := &waitSampler{max: map[string]int{}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.run(ctx, quiet, quit, conn) }()
	stop := func(requests int64) (map[string]float64, error) {
		close(quit)
		wg.Wait()
		defer conn.Close(context.Background())
		cctx, cancel := context.WithTimeout(quiet, 10*time.Second)
		defer cancel()
		after, err := collect(cctx, conn, postmaster, exclude)
		if err != nil {
			return nil, fmt.Errorf("postgres: observe: %w", err)
		}
		d := after.sub(before)
		figs := pgFigures(d, w, requests)
		if sink := handle.Statements(ctx); sink != nil && len(d.Warnings) == 0 {
			sink(d.statements())
		}
		if len(d.Warnings) > 0 {
			return figs, fmt.Errorf("postgres: observe: %s: no buffers, statements or plan+exec time for this run", strings.Join(d.Warnings, "; "))
		}
		return figs, nil
	}
	return kit.ObserveGroup(ctx, group, stop), nil
}

// pgFigures turns a window's delta into the figures StartObserving promises.
// When pg_stat_statements could not be read at either end (d.Warnings), the
// figures taken from it are left out: zero buffers would be a figure the
// run never had.
func pgFigures(d *pgStats, w *waitSampler, requests int64) map[string]float64 {
	tot := map[string]float64{
		"db_cpu_us":    float64(d.CPUBackNS) / 1e3,
		"db_cpu_us_bg": float64(d.CPUBgNS) / 1e3,
		"wal_bytes":    float64(d.WALLSN),
	}
	if len(d.Warnings) == 0 {
		t := d.total()
		tot["buffers"] = float64(t.SharedHit + t.SharedRead)
		tot["shared_read"] = float64(t.SharedRead)
		tot["plan_exec_ms"] = t.PlanMS + t.ExecMS
		tot["statements"] = float64(t.Calls)
	}
	out := map[string]float64{}
	for k, v := range tot {
		out[k] = v
		if requests > 0 {
			out[k+"_per_req"] = v / float64(requests)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out["walwrite_waiters_max"] = float64(w.max["WALWrite"])
	out["lock_waiters_max"] = float64(w.max["type:Lock"])
	out["active_backends_max"] = float64(w.max["active"])
	out["wait_samples"] = float64(w.samples)
	return out
}

// waitSampler counts the client backends in each wait event a few times a
// second and keeps the maximum of each.
type waitSampler struct {
	mu      sync.Mutex
	max     map[string]int
	samples int
}

const waitSQL = monitorTag + `SELECT coalesce(wait_event_type, ''), coalesce(wait_event, ''), count(*)
FROM pg_stat_activity WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()
GROUP BY 1, 2`

// run samples until quit closes or ctx (the user's) is cancelled; each
// query runs under quiet, bounded by a timeout.
func (w *waitSampler) run(ctx, quiet context.Context, quit <-chan struct{}, conn *pgx.Conn) {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		qctx, cancel := context.WithTimeout(quiet, 2*time.Second)
		w.sample(qctx, conn)
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-quit:
			return
		case <-t.C:
		}
	}
}

func (w *waitSampler) sample(ctx context.Context, conn *pgx.Conn) {
	rs, err := conn.Query(ctx, waitSQL)
	if err != nil {
		return
	}
	defer rs.Close()
	now := map[string]int{}
	for rs.Next() {
		var typ, ev string
		var n int
		if rs.Scan(&typ, &ev, &n) != nil {
			return
		}
		now["active"] += n
		if ev != "" {
			now[ev] += n
			now["type:"+typ] += n
		}
	}
	if rs.Err() != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples++
	for k, n := range now {
		w.max[k] = max(w.max[k], n)
	}
}

// statements are the window's statements as a run attributes them to its
// tags (handle.Statements).
func (s *pgStats) statements() []handle.Statement {
	out := make([]handle.Statement, 0, len(s.Statements))
	for _, st := range s.Statements {
		out = append(out, handle.Statement{Query: st.Query, Calls: st.Calls, PlanExecMS: st.PlanMS + st.ExecMS,
			SharedHit: st.SharedHit, SharedRead: st.SharedRead})
	}
	return out
}
