package backend

import (
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"go.starlark.net/starlark"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/benchbook/benchbook/runtime"
)

// sqliteHandle is the value of backend.sqlite(path): a database file
// relative to the notebook (":memory:" for a private one).
type sqliteHandle struct {
	path string
	id   string // resource dir when the file's state is tracked; "" for ":memory:"

	mu      sync.Mutex
	db      *sql.DB
	changes int64 // total_changes() at the last state mark
}

var (
	_ starlark.HasAttrs   = (*sqliteHandle)(nil)
	_ runtime.StateHolder = (*sqliteHandle)(nil)
)

func sqliteBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
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
	h := &sqliteHandle{path: path, db: db}
	runtime.AtExit(th, func() { h.conn().Close() })
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

func (h *sqliteHandle) conn() *sql.DB {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.db
}

func (h *sqliteHandle) String() string        { return fmt.Sprintf("<sqlite %s>", h.path) }
func (h *sqliteHandle) Type() string          { return "sqlite" }
func (h *sqliteHandle) Freeze()               {}
func (h *sqliteHandle) Truth() starlark.Bool  { return true }
func (h *sqliteHandle) Hash() (uint32, error) { return 0, errors.New("unhashable type: sqlite") }
func (h *sqliteHandle) AttrNames() []string   { return []string{"exec", "path", "query"} }

func (h *sqliteHandle) Attr(name string) (starlark.Value, error) {
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
func (h *sqliteHandle) exec(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	q, params, err := sqlArgs(b.Name(), args, kwargs)
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
func (h *sqliteHandle) query(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	q, params, err := sqlArgs(b.Name(), args, kwargs)
	if err != nil {
		return nil, err
	}
	if err := h.touch(th, !readOnly(q)); err != nil {
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
			row[i] = toStarlark(v)
		}
		rows = append(rows, row)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return makeTable(cols, rows), nil
}

func sqlArgs(name string, args starlark.Tuple, kwargs []starlark.Tuple) (string, []any, error) {
	if len(kwargs) > 0 {
		return "", nil, fmt.Errorf("%s: unexpected keyword argument %s", name, kwargs[0][0])
	}
	if len(args) < 1 {
		return "", nil, fmt.Errorf("%s: missing argument sql", name)
	}
	q, ok := starlark.AsString(args[0])
	if !ok {
		return "", nil, fmt.Errorf("%s: sql must be a string, got %s", name, args[0].Type())
	}
	params := make([]any, len(args)-1)
	for i, a := range args[1:] {
		v, err := toGo(a)
		if err != nil {
			return "", nil, fmt.Errorf("%s: argument %d: %w", name, i+1, err)
		}
		params[i] = v
	}
	return q, params, nil
}
