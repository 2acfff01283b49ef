// Package sqlite opens a SQLite database file for a notebook: backend.sqlite.
//
// The file is a tracked resource (state.go): cells record the state of
// its data they ran on and left, and a snapshot (VACUUM INTO) brings a
// state back. ":memory:" is a private database, not tracked.
package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"go.starlark.net/starlark"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/internal/table"
	"github.com/benchbook/benchbook/runtime"
)

// Handle is the value of backend.sqlite(path): a database file
// relative to the notebook (":memory:" for a private one).
type Handle struct {
	path string
	id   string            // resource dir when the file's state is tracked; "" for ":memory:"
	res  *runtime.Resource // what the runtime tracks; nil for ":memory:"

	mu      sync.Mutex
	db      *sql.DB
	changes string // changeCount() at the last state mark
	seen    string // statOf the file when last noted (origin.go)
}

var _ handle.Stateful = (*Handle)(nil)

// Kind is backend.sqlite(path).
var Kind = handle.Kind{Name: "sqlite", Builtin: starlark.NewBuiltin("backend.sqlite", builtin),
	Inputs: map[string]runtime.InputChecker{originKind: checkOrigin}}

func builtin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path); err != nil {
		return nil, err
	}
	if path != ":memory:" {
		path = runtime.Path(th, path)
	}
	db, err := openSQLite(th, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	h := &Handle{path: path, db: db}
	runtime.AtExit(th, h.Close)
	if path != ":memory:" {
		if err := h.register(th); err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
	}
	return h, nil
}

func openSQLite(th *starlark.Thread, path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // one connection: ":memory:" stays one database
	if err := db.PingContext(runtime.Context(th)); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return db, nil
}

// Close closes the database and notes the file as benchbook leaves it
// (closing may fold a write-ahead log into it).
func (h *Handle) Close() {
	h.conn().Close()
	h.noteSeen()
}

func (h *Handle) conn() *sql.DB {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.db
}

func (h *Handle) String() string        { return fmt.Sprintf("<sqlite %s>", h.path) }
func (h *Handle) Type() string          { return "sqlite" }
func (h *Handle) Freeze()               {}
func (h *Handle) Truth() starlark.Bool  { return true }
func (h *Handle) Hash() (uint32, error) { return 0, errors.New("unhashable type: sqlite") }
func (h *Handle) AttrNames() []string   { return []string{"exec", "path", "query"} }

func (h *Handle) Attr(name string) (starlark.Value, error) {
	switch name {
	case "path":
		return starlark.String(h.path), nil
	case "exec":
		return starlark.NewBuiltin("sqlite.exec", h.exec), nil
	case "query":
		return starlark.NewBuiltin("sqlite.query", h.query), nil
	}
	return nil, nil
}

// exec is .exec(sql, *args): rows affected.
func (h *Handle) exec(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	q, params, err := kit.SQLArgs(b.Name(), args, kwargs)
	if err != nil {
		return nil, err
	}
	if err := h.touch(th, true); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	res, err := h.conn().ExecContext(runtime.Context(th), q, params...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	n, _ := res.RowsAffected()
	return starlark.MakeInt64(n), nil
}

// query is .query(sql, *args): a table.
func (h *Handle) query(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	q, params, err := kit.SQLArgs(b.Name(), args, kwargs)
	if err != nil {
		return nil, err
	}
	if err := h.touch(th, !kit.ReadOnly(q)); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	rs, err := h.conn().QueryContext(runtime.Context(th), q, params...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var rows [][]starlark.Value
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		row := make([]starlark.Value, len(cols))
		for i, v := range vals {
			row[i] = kit.ToStarlark(v)
		}
		rows = append(rows, row)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return table.New(cols, rows), nil
}
