package postgres

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/limits"
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
func (h *Handle) StateID() string {
	if h.c == nil {
		return "dsn:" + redact.String(h.connDSN)
	}
	return h.c.root
}

// touch announces a use (or a change) of the cluster to the runtime, which
// first puts the data in the state the notebook order gives the cell.
func (h *Handle) touch(th *starlark.Thread, change bool) error {
	if h.c == nil {
		return nil
	}
	return runtime.Touch(th, h.c.root, change)
}

// register makes the cluster a tracked resource of the running cell.
// Its initial state is named by its spec: the binaries and the settings
// the creating cell asked for.
func (h *Handle) register(th *starlark.Thread, spec map[string]string, created, outside bool) error {
	c := h.c
	bin := c.binaries()
	sum := sha256.Sum256([]byte("postgres initdb\x00" + bin + "\x00" + settingsKey(spec)))
	h.res = &runtime.Resource{
		ID:      c.root,
		Name:    "postgres of cell " + runtime.CellName(th),
		Initial: "pg-" + hex.EncodeToString(sum[:12]),
		Created: created,
		Outside: outside,
		Save: func(dir, base string) error {
			return h.withStopped(th, func(c *cluster) error {
				return saveSnapshot(runtime.Context(th), c.dataDir(), dir, base)
			})
		},
		Load: func(dir string) error {
			return h.withStopped(th, func(c *cluster) error {
				if err := restoreSnapshot(runtime.Context(th), dir, c.dataDir()); err != nil {
					return err
				}
				c.loadSettings()
				return nil
			})
		},
		Moved: h.moved,
		Mark:  func() { lsn := h.currentLSN(); h.mu.Lock(); h.lsn = lsn; h.mu.Unlock() },
		Holds: h.holds,
	}
	return runtime.RegisterResource(th, h.res)
}

// Resource is the cluster's tracked resource; nil for a server attached
// by DSN.
func (h *Handle) Resource() *runtime.Resource { return h.res }

func settingsKey(set map[string]string) string {
	data, _ := json.Marshal(set) // sorted keys
	return string(data)
}

// moved reports whether the data may have changed since the last mark: the
// WAL insert position moved, and not only by what PostgreSQL writes on its
// own while nothing changes (the bgwriter's RUNNING_XACTS every 15 s, a
// timed checkpoint), as pg_waldump shows. Anything else, autovacuum
// included, is a change: when unsure, it changed.
func (h *Handle) moved() bool {
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
func (h *Handle) flushedTo(lsn string) bool {
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

func (h *Handle) markedLSN() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lsn
}

// currentLSN is the WAL insert position; "" (always "moved") when it cannot
// be read.
func (h *Handle) currentLSN() string {
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

// settingsFile keeps the user's settings inside the data dir, so a snapshot
// brings back the settings its data ran with (a restart cell's).
const settingsFile = "benchbook-settings.json"

func (c *cluster) saveSettings() error {
	data, _ := json.Marshal(c.settings)
	return kit.WriteOwn(filepath.Join(c.dataDir(), settingsFile), data)
}

// loadSettings takes the settings the data dir last ran with, if recorded.
func (c *cluster) loadSettings() {
	data, err := limits.ReadFile(filepath.Join(c.dataDir(), settingsFile), limits.File)
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

// controlData is what pg_controldata says of a data dir (a running
// cluster's or a snapshot's) by field ("Latest checkpoint location",
// "Database cluster state"); nil when it cannot be read.
func controlData(dir string) map[string]string {
	bin, err := lookBin("pg_controldata")
	if err != nil {
		return nil
	}
	text, err := exec.Command(bin, "-D", dir).Output()
	if err != nil {
		return nil
	}
	fields := map[string]string{}
	for _, line := range strings.Split(string(text), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return fields
}

// controlData is what pg_controldata says of the cluster's data dir.
func (c *cluster) controlData() map[string]string { return controlData(c.dataDir()) }

// lastCheckpoint reads "Latest checkpoint location" from pg_controldata.
func (c *cluster) lastCheckpoint() string {
	return c.controlData()["Latest checkpoint location"]
}

// holds reports whether the running cluster's data is what snapshot dir
// holds, so that restoring it would copy the same data back: the same
// cluster (system identifier, timeline), the same history up to the
// snapshot's checkpoint (the WAL segment holding it has the same bytes up
// to there in both), and since then nothing but housekeeping records. A
// cell that announced a change and made none (an exec of SET) leaves a
// new state identity over the same data; this spares its successors the
// copy. When unsure, it does not hold.
func (h *Handle) holds(dir string) bool {
	snap, live := controlData(dir), controlData(h.c.dataDir())
	from := snap["Latest checkpoint location"]
	for _, f := range []string{"Database system identifier", "Latest checkpoint's TimeLineID"} {
		if snap[f] == "" || snap[f] != live[f] {
			return false
		}
	}
	to := h.currentLSN()
	if from == "" || to == "" || !h.flushedTo(to) || !h.sameHistory(dir, from) {
		return false
	}
	return onlyHousekeeping(h.c.dataDir(), from, to)
}

// sameHistory compares the WAL segment holding lsn, up to lsn, in the
// snapshot and in the running cluster: a cluster restored from another
// state continues another history, and its segment differs before lsn.
func (h *Handle) sameHistory(dir, lsn string) bool {
	h.mu.Lock()
	pool := h.pool
	h.mu.Unlock()
	if pool == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var file string
	var offset int64
	if err := pool.QueryRow(ctx, monitorTag+"SELECT file_name, file_offset FROM pg_walfile_name_offset($1::pg_lsn)", lsn).Scan(&file, &offset); err != nil {
		return false
	}
	a, err1 := readPrefix(filepath.Join(dir, "pg_wal", file), offset)
	b, err2 := readPrefix(filepath.Join(h.c.dataDir(), "pg_wal", file), offset)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// readPrefix reads the first n bytes of path.
func readPrefix(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	_, err = io.ReadFull(f, buf)
	return buf, err
}

// recordCheckpoint notes where the stopped data dir stands.
func (c *cluster) recordCheckpoint() {
	if cp := c.lastCheckpoint(); cp != "" {
		kit.WriteOwn(filepath.Join(c.root, checkpointFile), []byte(cp+"\n"))
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
	was, err := c.recordedCheckpoint()
	if err != nil {
		return false // never recorded: nothing to compare with
	}
	now := cd["Latest checkpoint location"]
	return now != "" && now != was
}

// recordedCheckpoint is the checkpoint location benchbook recorded when it
// last stopped the cluster.
func (c *cluster) recordedCheckpoint() (string, error) {
	data, err := limits.ReadFile(filepath.Join(c.root, checkpointFile), limits.File)
	return strings.TrimSpace(string(data)), err
}

func (c *cluster) String() string { return fmt.Sprintf("cluster %s", c.root) }
