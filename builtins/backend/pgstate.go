package backend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/redact"
)

// A cluster of benchbook's own is a tracked resource (runtime/state.go):
// every cell that uses it runs on a known state of its data, restored from
// a snapshot (a copy of the stopped data dir) when it holds another one.
// Writes are seen two ways: the methods that write say so (exec, restart,
// restore), and the WAL insert position moving between a cell's first use
// and its end catches the rest (a workload's UPDATEs, a DSN given to
// pgbench). A data dir changed while benchbook was not running is seen by
// its last checkpoint having moved.

// StateID is the resource ID of an own cluster: its root directory.
func (h *pgHandle) StateID() string {
	if h.c == nil {
		return "dsn:" + redact.String(h.connDSN)
	}
	return h.c.root
}

// touch announces a use (or a change) of the cluster to the runtime, which
// first puts the data in the state the notebook order gives the cell.
func (h *pgHandle) touch(th *starlark.Thread, change bool) error {
	if h.c == nil {
		return nil
	}
	return runtime.Touch(th, h.c.root, change)
}

// register makes the cluster a tracked resource of the running cell.
// Its initial state is named by its spec: the binaries and the settings
// the creating cell asked for.
func (h *pgHandle) register(th *starlark.Thread, spec map[string]string, created, outside bool) error {
	c := h.c
	bin := c.binaries()
	sum := sha256.Sum256([]byte("postgres initdb\x00" + bin + "\x00" + settingsKey(spec)))
	return runtime.RegisterResource(th, &runtime.Resource{
		ID:      c.root,
		Name:    "postgres of cell " + runtime.CellName(th),
		Initial: "pg-" + hex.EncodeToString(sum[:12]),
		Created: created,
		Outside: outside,
		Save: func(dir string) error {
			return h.withStopped(th, func(c *cluster) error {
				return copyDir(runtime.Context(th), c.dataDir(), dir)
			})
		},
		Load: func(dir string) error {
			return h.withStopped(th, func(c *cluster) error {
				if err := copyDir(runtime.Context(th), dir, c.dataDir()); err != nil {
					return err
				}
				c.loadSettings()
				return nil
			})
		},
		Moved: h.moved,
		Mark:  func() { lsn := h.currentLSN(); h.mu.Lock(); h.lsn = lsn; h.mu.Unlock() },
	})
}

func settingsKey(set map[string]string) string {
	data, _ := json.Marshal(set) // sorted keys
	return string(data)
}

// moved reports whether the data may have changed since the last mark: the
// WAL insert position moved, and not only by what PostgreSQL writes on its
// own while nothing changes (the bgwriter's RUNNING_XACTS every 15 s, a
// timed checkpoint), as pg_waldump shows. Anything else, autovacuum
// included, is a change: when unsure, it changed.
func (h *pgHandle) moved() bool {
	from, to := h.markedLSN(), h.currentLSN()
	if from == to && to != "" {
		return false
	}
	if from == "" || to == "" || !h.flushedTo(to) {
		return true
	}
	return !onlyHousekeeping(h.c.dataDir(), from, to)
}

// flushedTo waits briefly until the WAL is on disk up to lsn (the walwriter
// flushes every 200 ms), so pg_waldump can read it.
func (h *pgHandle) flushedTo(lsn string) bool {
	h.mu.Lock()
	pool := h.pool
	h.mu.Unlock()
	if pool == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for {
		var ok bool
		if err := pool.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn", lsn).Scan(&ok); err != nil {
			return false
		}
		if ok {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// housekeeping are WAL records that change nothing a query can see: the
// bgwriter's snapshots, checkpoints, and a read's opportunistic pruning of
// tuples every transaction already sees as dead (a plain SELECT prunes
// catalog pages after DDL) or its hint bits.
var housekeeping = map[string]bool{
	"Heap2 PRUNE":              true,
	"XLOG FPI_FOR_HINT":        true,
	"Standby RUNNING_XACTS":    true,
	"XLOG CHECKPOINT_ONLINE":   true,
	"XLOG CHECKPOINT_SHUTDOWN": true,
	"XLOG SWITCH":              true,
}

// onlyHousekeeping reads the WAL records between two positions.
func onlyHousekeeping(dataDir, from, to string) bool {
	bin, err := lookBin("pg_waldump")
	if err != nil {
		return false
	}
	out, err := exec.Command(bin, "-p", filepath.Join(dataDir, "pg_wal"), "-s", from, "-e", to).Output()
	if err != nil && len(out) == 0 {
		return false
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		rmgr, ok := field(line, "rmgr:")
		if !ok {
			continue
		}
		desc, _ := field(line, "desc:")
		if !housekeeping[rmgr+" "+desc] {
			return false
		}
		n++
	}
	return n > 0
}

// field returns the first word after label in a pg_waldump line.
func field(line, label string) (string, bool) {
	i := strings.Index(line, label)
	if i < 0 {
		return "", false
	}
	f := strings.Fields(line[i+len(label):])
	if len(f) == 0 {
		return "", false
	}
	return f[0], true
}

func (h *pgHandle) markedLSN() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lsn
}

// currentLSN is the WAL insert position; "" (always "moved") when it cannot
// be read.
func (h *pgHandle) currentLSN() string {
	h.mu.Lock()
	pool := h.pool
	h.mu.Unlock()
	if pool == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var lsn string
	if err := pool.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&lsn); err != nil {
		return ""
	}
	return lsn
}

// readOnly reports whether a query statement cannot write: a plain SELECT,
// SHOW, EXPLAIN without ANALYZE, VALUES or TABLE. Anything else (a DML
// statement with RETURNING, a function call that writes) counts as a change.
func readOnly(sql string) bool {
	s := strings.ToUpper(strings.TrimSpace(sql))
	for _, p := range []string{"SELECT", "SHOW", "VALUES", "TABLE"} {
		if strings.HasPrefix(s, p) {
			return !strings.Contains(s, " INTO ") && !strings.Contains(s, "NEXTVAL") && !strings.Contains(s, "SETVAL")
		}
	}
	return strings.HasPrefix(s, "EXPLAIN") && !strings.Contains(s, "ANALYZE")
}

// settingsFile keeps the user's settings inside the data dir, so a snapshot
// brings back the settings its data ran with (a restart cell's).
const settingsFile = "benchbook-settings.json"

func (c *cluster) saveSettings() error {
	data, _ := json.Marshal(c.settings)
	return os.WriteFile(filepath.Join(c.dataDir(), settingsFile), data, 0o644)
}

// loadSettings takes the settings the data dir last ran with, if recorded.
func (c *cluster) loadSettings() {
	data, err := os.ReadFile(filepath.Join(c.dataDir(), settingsFile))
	if err != nil {
		return
	}
	var set map[string]string
	if json.Unmarshal(data, &set) == nil {
		c.settings = set
	}
}

// checkpointFile holds the data dir's last checkpoint location as
// benchbook left it when it stopped the cluster.
const checkpointFile = "checkpoint"

// controlData reads the fields pg_controldata prints ("Latest checkpoint
// location", "Database cluster state"); nil when it cannot be read.
func (c *cluster) controlData() map[string]string {
	bin, err := lookBin("pg_controldata")
	if err != nil {
		return nil
	}
	out, err := exec.Command(bin, "-D", c.dataDir()).Output()
	if err != nil {
		return nil
	}
	fields := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return fields
}

// lastCheckpoint reads "Latest checkpoint location" from pg_controldata.
func (c *cluster) lastCheckpoint() string {
	return c.controlData()["Latest checkpoint location"]
}

// recordCheckpoint notes where the stopped data dir stands.
func (c *cluster) recordCheckpoint() {
	if cp := c.lastCheckpoint(); cp != "" {
		os.WriteFile(filepath.Join(c.root, checkpointFile), []byte(cp+"\n"), 0o644)
	}
}

// changedOutside reports whether the stopped data dir may have changed
// since benchbook stopped it: it was not shut down cleanly (a server run
// on it by hand and stopped with -m immediate, a crash: what it wrote is
// in the WAL past the last checkpoint, replayed at the next start, and no
// checkpoint moved), or its last checkpoint moved (a server started on it
// by hand and stopped cleanly, pg_resetwal, a copy). Benchbook itself
// always stops a cluster cleanly; after a run of its own was killed, the
// data holds what an unfinished cell left, which is no state a cell knows
// either.
func (c *cluster) changedOutside() bool {
	cd := c.controlData()
	if cd == nil {
		return false // cannot tell (no pg_controldata)
	}
	if state := cd["Database cluster state"]; state != "" && state != "shut down" {
		return true
	}
	data, err := os.ReadFile(filepath.Join(c.root, checkpointFile))
	if err != nil {
		return false // never recorded: nothing to compare with
	}
	now := cd["Latest checkpoint location"]
	return now != "" && now != strings.TrimSpace(string(data))
}

func (c *cluster) String() string { return fmt.Sprintf("cluster %s", c.root) }
