package sqlite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/runtime"
)

// A SQLite file is a tracked resource (runtime/state.go) like a cluster:
// its initial state is the file as benchbook first found it (snapshotted
// then), a snapshot is VACUUM INTO a copy, a restore copies it back over
// the file with the connection closed, and writes are seen by the methods
// (exec, a query that is not a plain SELECT) and by the change counters
// (changeCount): total_changes() for this connection's writes, and
// PRAGMA data_version for those of any other (a target process writing
// the file), which total_changes() never saw.
// ":memory:" is not tracked: it starts empty in every process.

func (h *Handle) StateID() string {
	if h.id == "" {
		return "sqlite:" + h.path
	}
	return h.id
}

func (h *Handle) touch(th *starlark.Thread, change bool) error {
	if h.id == "" {
		return nil
	}
	return runtime.Touch(th, h.id, change)
}

// initialFile keeps the identity of the file's first state.
const initialFile = "initial-state"

func (h *Handle) register(th *starlark.Thread) error {
	sum := sha256.Sum256([]byte(h.path))
	dir, err := runtime.ResourceDir(th, "sqlite-"+hex.EncodeToString(sum[:6]))
	if err != nil {
		return err
	}
	if h.id, err = filepath.Abs(dir); err != nil {
		return err
	}
	initial, created, err := origin(h.id, h.path)
	if err != nil {
		return err
	}
	if readInitial(h.id) != initial {
		if err := kit.WriteOwn(filepath.Join(h.id, initialFile), []byte(initial+"\n")); err != nil {
			return err
		}
	}
	h.res = &runtime.Resource{
		ID:      h.id,
		Name:    "sqlite " + filepath.Base(h.path) + " of cell " + runtime.CellName(th),
		Initial: initial,
		Created: created,
		Save:    func(dir, _ string) error { return h.save(dir) },
		Load:    func(dir string) error { return h.load(th, dir) },
		Moved:   func() bool { n := h.changeCount(); return n == "" || n != h.marked() },
		Mark: func() {
			n := h.changeCount()
			h.mu.Lock()
			h.changes = n
			h.mu.Unlock()
			h.noteSeen()
		},
	}
	// The file's content as benchbook found it is an input of the cell
	// that opens it, re-checked on lookup (origin): another file put in
	// its place makes that cell stale, and with it every cell that uses
	// the file.
	runtime.AddInput(th, runtime.Input{Kind: originKind, Name: h.id, Hash: initial})
	if err := runtime.RegisterResource(th, h.res); err != nil {
		return err
	}
	h.noteSeen()
	return nil
}

// readInitial is the identity of the file's first state, "" if none yet.
func readInitial(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, initialFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// Resource is the file's tracked resource; nil for ":memory:".
func (h *Handle) Resource() *runtime.Resource { return h.res }

// fileState names the file's content as a first state ("absent" if none).
func fileState(path string) (string, error) {
	sum, err := content(path)
	switch {
	case err != nil:
		return "", err
	case sum == "absent":
		return "sqlite-absent", nil
	}
	return "sqlite-" + sum[:24], nil
}

func (h *Handle) save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	target := filepath.Join(dir, "db")
	_, err := h.conn().ExecContext(context.Background(), "VACUUM INTO '"+strings.ReplaceAll(target, "'", "''")+"'")
	return err
}

// load closes the connection, puts the snapshot in place of the file (its
// journal files removed) and opens it again.
func (h *Handle) load(th *starlark.Thread, dir string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.db.Close()
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		os.Remove(h.path + suffix)
	}
	if err := copyFile(filepath.Join(dir, "db"), h.path); err != nil {
		return err
	}
	db, err := openSQLite(th, h.path)
	if err != nil {
		return err
	}
	h.db = db
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := to + ".benchbook-restore"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, to)
}

// changeCount names the writes the file has seen: this connection's
// total_changes() and data_version, which moves when another connection
// commits; "" when they cannot be read (a change, to be safe).
func (h *Handle) changeCount() string {
	ctx := context.Background()
	var own, others int64
	db := h.conn()
	if db.QueryRowContext(ctx, "SELECT total_changes()").Scan(&own) != nil ||
		db.QueryRowContext(ctx, "PRAGMA data_version").Scan(&others) != nil {
		return ""
	}
	return fmt.Sprintf("%d/%d", own, others)
}

func (h *Handle) marked() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changes
}
