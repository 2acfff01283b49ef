package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/internal/table"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/procfs"
	"github.com/benchbook/benchbook/runtime/record"
)

// monitorTag starts every query benchbook itself sends to observe a server,
// so that pg_stat_statements figures leave them out.
const monitorTag = "/* benchbook monitor */ "

// stmt is one pg_stat_statements entry (or its difference).
type stmt struct {
	Query         string  `json:"query"`
	Calls         int64   `json:"calls"`
	Rows          int64   `json:"rows"`
	PlanMS        float64 `json:"plan_ms"`
	ExecMS        float64 `json:"exec_ms"`
	SharedHit     int64   `json:"shared_blks_hit"`
	SharedRead    int64   `json:"shared_blks_read"`
	SharedDirtied int64   `json:"shared_blks_dirtied"`
	SharedWritten int64   `json:"shared_blks_written"`
	WALBytes      int64   `json:"wal_bytes"`
}

// pgStats is a snapshot of a server's counters, or (Delta) the difference of
// two snapshots.
type pgStats struct {
	Delta      bool             `json:"delta"`
	At         time.Time        `json:"at"`
	Seconds    float64          `json:"seconds,omitempty"` // delta: wall time between snapshots
	WALLSN     int64            `json:"wal_lsn"`           // bytes of WAL: position, or written in the window
	Statements map[string]stmt  `json:"statements"`        // by queryid/userid/dbid
	Database   map[string]int64 `json:"database"`          // pg_stat_database, summed; backends flush it lazily (~1 s)
	CPUBackNS  int64            `json:"cpu_backends_ns"`   // client backends, with reaped children
	CPUBgNS    int64            `json:"cpu_background_ns"` // postmaster and background workers
	Warnings   []string         `json:"warnings,omitempty"`
}

// The text is NULL when pg_stat_statements cannot read its texts file;
// such an entry still counts.
const statementsSQL = monitorTag + `SELECT queryid::text || '/' || userid::text || '/' || dbid::text, coalesce(query, ''),
  calls, rows, total_plan_time, total_exec_time, shared_blks_hit, shared_blks_read,
  shared_blks_dirtied, shared_blks_written, wal_bytes::bigint
FROM pg_stat_statements WHERE coalesce(query, '') NOT LIKE '/* benchbook monitor */%'`

const databaseSQL = monitorTag + `SELECT coalesce(sum(xact_commit),0)::bigint, coalesce(sum(xact_rollback),0)::bigint,
  coalesce(sum(blks_read),0)::bigint, coalesce(sum(blks_hit),0)::bigint, coalesce(sum(tup_returned),0)::bigint,
  coalesce(sum(tup_fetched),0)::bigint, coalesce(sum(tup_inserted),0)::bigint, coalesce(sum(tup_updated),0)::bigint,
  coalesce(sum(tup_deleted),0)::bigint, coalesce(sum(temp_bytes),0)::bigint, coalesce(sum(deadlocks),0)::bigint
FROM pg_stat_database`

var databaseCols = []string{"xact_commit", "xact_rollback", "blks_read", "blks_hit", "tup_returned",
	"tup_fetched", "tup_inserted", "tup_updated", "tup_deleted", "temp_bytes", "deadlocks"}

// collect takes a snapshot over conn. postmaster is the server's PID when it
// runs on this host (0: no CPU figures); exclude are backend PIDs whose CPU
// is benchbook's own (the monitor connection).
func collect(ctx context.Context, conn *pgx.Conn, postmaster int, exclude map[int]bool) (*pgStats, error) {
	s := &pgStats{At: time.Now(), Statements: map[string]stmt{}, Database: map[string]int64{}}
	if err := conn.QueryRow(ctx, monitorTag+"SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint").Scan(&s.WALLSN); err != nil {
		return nil, fmt.Errorf("wal position: %w", err)
	}
	if err := readStatements(ctx, conn, s); err != nil {
		s.Warnings = append(s.Warnings, "pg_stat_statements: "+err.Error())
	}
	vals := make([]any, len(databaseCols))
	nums := make([]int64, len(databaseCols))
	for i := range nums {
		vals[i] = &nums[i]
	}
	if err := conn.QueryRow(ctx, databaseSQL).Scan(vals...); err != nil {
		return nil, fmt.Errorf("pg_stat_database: %w", err)
	}
	for i, c := range databaseCols {
		s.Database[c] = nums[i]
	}
	s.CPUBackNS, s.CPUBgNS = serverCPU(postmaster, exclude)
	return s, nil
}

func readStatements(ctx context.Context, conn *pgx.Conn, s *pgStats) error {
	rs, err := conn.Query(ctx, statementsSQL)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		var key string
		var st stmt
		if err := rs.Scan(&key, &st.Query, &st.Calls, &st.Rows, &st.PlanMS, &st.ExecMS, &st.SharedHit,
			&st.SharedRead, &st.SharedDirtied, &st.SharedWritten, &st.WALBytes); err != nil {
			return err
		}
		s.Statements[key] = st
	}
	return rs.Err()
}

// backgroundNames are the process titles of PostgreSQL's own workers; any
// other child of the postmaster serves a client.
var backgroundNames = []string{"checkpointer", "background writer", "walwriter", "autovacuum",
	"logical replication", "archiver", "stats collector", "walsender", "walreceiver", "startup", "wal "}

// serverCPU sums the CPU of the postmaster's tree, split into client
// backends and background processes. CPU of children that already exited
// (reaped by the postmaster) counts as backend CPU: short-lived connections
// are the usual cause.
func serverCPU(postmaster int, exclude map[int]bool) (backends, background int64) {
	if postmaster <= 0 {
		return 0, 0
	}
	for _, p := range procfs.Tree(postmaster) {
		switch {
		case p.PID == postmaster:
			background += p.CPU.Nanoseconds()
			backends += p.ChildCPU.Nanoseconds()
		case exclude[p.PID]:
		case isBackground(p.Cmdline):
			background += (p.CPU + p.ChildCPU).Nanoseconds()
		default:
			backends += (p.CPU + p.ChildCPU).Nanoseconds()
		}
	}
	return backends, background
}

func isBackground(cmdline string) bool {
	title := strings.TrimPrefix(cmdline, "postgres: ")
	for _, n := range backgroundNames {
		if strings.HasPrefix(title, n) {
			return true
		}
	}
	return false
}

// sub returns s - old. Counters that went backwards (a restart reset them)
// count from zero.
func (s *pgStats) sub(old *pgStats) *pgStats {
	d := &pgStats{Delta: true, At: s.At, Seconds: s.At.Sub(old.At).Seconds(),
		WALLSN: nonneg(s.WALLSN - old.WALLSN), Statements: map[string]stmt{}, Database: map[string]int64{},
		CPUBackNS: nonneg(s.CPUBackNS - old.CPUBackNS), CPUBgNS: nonneg(s.CPUBgNS - old.CPUBgNS),
		Warnings: append(append([]string(nil), old.Warnings...), s.Warnings...)}
	for k, v := range s.Database {
		d.Database[k] = nonneg(v - old.Database[k])
	}
	for k, n := range s.Statements {
		o := old.Statements[k]
		if n.Calls < o.Calls {
			o = stmt{}
		}
		if n.Calls == o.Calls {
			continue
		}
		d.Statements[k] = stmt{Query: n.Query, Calls: n.Calls - o.Calls, Rows: n.Rows - o.Rows,
			PlanMS: n.PlanMS - o.PlanMS, ExecMS: n.ExecMS - o.ExecMS,
			SharedHit: n.SharedHit - o.SharedHit, SharedRead: n.SharedRead - o.SharedRead,
			SharedDirtied: n.SharedDirtied - o.SharedDirtied, SharedWritten: n.SharedWritten - o.SharedWritten,
			WALBytes: n.WALBytes - o.WALBytes}
	}
	return d
}

func nonneg(n int64) int64 { return max(n, 0) }

// total sums the statements.
func (s *pgStats) total() stmt {
	var t stmt
	for _, st := range s.Statements {
		t.Calls += st.Calls
		t.Rows += st.Rows
		t.PlanMS += st.PlanMS
		t.ExecMS += st.ExecMS
		t.SharedHit += st.SharedHit
		t.SharedRead += st.SharedRead
		t.SharedDirtied += st.SharedDirtied
		t.SharedWritten += st.SharedWritten
		t.WALBytes += st.WALBytes
	}
	return t
}

// sorted returns the statements, most time first.
func (s *pgStats) sorted() []stmt {
	out := make([]stmt, 0, len(s.Statements))
	for _, st := range s.Statements {
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].PlanMS+out[i].ExecMS, out[j].PlanMS+out[j].ExecMS
		if a != b {
			return a > b
		}
		return out[i].Query < out[j].Query
	})
	return out
}

// stats is .stats(): a snapshot; b - a is the difference over a window.
func (h *Handle) stats(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0); err != nil {
		return nil, err
	}
	if _, err := h.db(th, false); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	ctx := runtime.Context(th)
	conn, err := h.conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer conn.Close(context.Background())
	exclude := map[int]bool{int(conn.PgConn().PID()): true}
	s, err := collect(ctx, conn, h.serverPID(ctx, conn), exclude)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &statsValue{s}, nil
}

// serverPID is the postmaster's PID: ours, or for an attached server on this
// host the parent of its checkpointer (0 when it is elsewhere).
func (h *Handle) serverPID(ctx context.Context, conn *pgx.Conn) int {
	if pid := h.postmasterPID(); pid > 0 {
		return pid
	}
	var pid int
	if conn.QueryRow(ctx, monitorTag+"SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'").Scan(&pid) != nil {
		return 0
	}
	if p, ok := procfs.ReadProc(pid); ok && strings.HasPrefix(p.Cmdline, "postgres: checkpointer") {
		return p.PPID
	}
	return 0
}

// statsValue is the Starlark face of pgStats.
type statsValue struct{ s *pgStats }

var (
	_ starlark.HasAttrs  = (*statsValue)(nil)
	_ starlark.HasBinary = (*statsValue)(nil)
	_ codec.Marshaler    = (*statsValue)(nil)
	_ record.HTMLer      = (*statsValue)(nil)
	_ record.Markdowner  = (*statsValue)(nil)
)

func decodeStats(data []byte, _ codec.Types) (starlark.Value, error) {
	s := &pgStats{}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, err
	}
	return &statsValue{s}, nil
}

func (v *statsValue) MarshalValue() ([]byte, error) { return json.Marshal(v.s) }
func (v *statsValue) Type() string                  { return "pg_stats" }
func (v *statsValue) Freeze()                       {}
func (v *statsValue) Truth() starlark.Bool          { return true }
func (v *statsValue) Hash() (uint32, error)         { return 0, errors.New("unhashable type: pg_stats") }

// CompareSameType: two pg_stats are equal when they hold the same counters
// taken at the same instant (what they store), as two deltas of the same
// snapshots are.
func (v *statsValue) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	return starval.EqualStored(op, v, y.(*statsValue))
}

func (v *statsValue) String() string {
	t := v.s.total()
	kind := "snapshot"
	if v.s.Delta {
		kind = fmt.Sprintf("delta %.1fs", v.s.Seconds)
	}
	return fmt.Sprintf("<pg_stats %s: %d calls, %d WAL bytes, %d shared hit, %d shared read, backend CPU %d µs>",
		kind, t.Calls, v.s.WALLSN, t.SharedHit, t.SharedRead, v.s.CPUBackNS/1000)
}

func (v *statsValue) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	w, ok := y.(*statsValue)
	if op != syntax.MINUS || !ok || side != starlark.Left {
		return nil, nil
	}
	if v.s.Delta || w.s.Delta {
		return nil, errors.New("pg_stats: subtract snapshots, not differences")
	}
	return &statsValue{v.s.sub(w.s)}, nil
}

func (v *statsValue) AttrNames() []string {
	return []string{"calls", "cpu_us_background", "cpu_us_backends", "database", "delta", "exec_ms",
		"plan_ms", "rows", "seconds", "shared_blks_dirtied", "shared_blks_hit", "shared_blks_read",
		"shared_blks_written", "statements", "wal_bytes", "warnings"}
}

func (v *statsValue) Attr(name string) (starlark.Value, error) {
	t := v.s.total()
	switch name {
	case "calls":
		return starlark.MakeInt64(t.Calls), nil
	case "rows":
		return starlark.MakeInt64(t.Rows), nil
	case "plan_ms":
		return starlark.Float(t.PlanMS), nil
	case "exec_ms":
		return starlark.Float(t.ExecMS), nil
	case "shared_blks_hit":
		return starlark.MakeInt64(t.SharedHit), nil
	case "shared_blks_read":
		return starlark.MakeInt64(t.SharedRead), nil
	case "shared_blks_dirtied":
		return starlark.MakeInt64(t.SharedDirtied), nil
	case "shared_blks_written":
		return starlark.MakeInt64(t.SharedWritten), nil
	case "wal_bytes":
		return starlark.MakeInt64(v.s.WALLSN), nil
	case "cpu_us_backends":
		return starlark.Float(float64(v.s.CPUBackNS) / 1e3), nil
	case "cpu_us_background":
		return starlark.Float(float64(v.s.CPUBgNS) / 1e3), nil
	case "seconds":
		return starlark.Float(v.s.Seconds), nil
	case "delta":
		return starlark.Bool(v.s.Delta), nil
	case "database":
		return intDict(v.s.Database), nil
	case "statements":
		return v.statements(), nil
	case "warnings":
		out := make([]starlark.Value, len(v.s.Warnings))
		for i, w := range v.s.Warnings {
			out[i] = starlark.String(w)
		}
		return starlark.NewList(out), nil
	}
	return nil, nil
}

func intDict(m map[string]int64) *starlark.Dict {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	d := starlark.NewDict(len(m))
	for _, k := range keys {
		_ = d.SetKey(starlark.String(k), starlark.MakeInt64(m[k]))
	}
	return d
}

// HTML is the summary line over the statements table.
func (v *statsValue) HTML() string {
	return "<p>" + html.EscapeString(v.String()) + "</p>\n" + v.table().HTML()
}

// Markdown is the summary line over the statements table.
func (v *statsValue) Markdown() string {
	return v.String() + "\n\n" + v.table().Markdown()
}

func (v *statsValue) statements() starlark.Value { return v.table() }

// table lists the statements, most time first.
func (v *statsValue) table() *table.Table {
	cols := []string{"query", "calls", "rows", "plan_ms", "exec_ms", "shared_blks_hit", "shared_blks_read",
		"shared_blks_dirtied", "shared_blks_written", "wal_bytes"}
	var rows [][]starlark.Value
	for _, st := range v.s.sorted() {
		rows = append(rows, []starlark.Value{starlark.String(st.Query), starlark.MakeInt64(st.Calls),
			starlark.MakeInt64(st.Rows), starlark.Float(st.PlanMS), starlark.Float(st.ExecMS),
			starlark.MakeInt64(st.SharedHit), starlark.MakeInt64(st.SharedRead),
			starlark.MakeInt64(st.SharedDirtied), starlark.MakeInt64(st.SharedWritten),
			starlark.MakeInt64(st.WALBytes)})
	}
	return table.New(cols, rows)
}
