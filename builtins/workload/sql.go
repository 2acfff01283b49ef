package workload

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/pgwire"
	"github.com/benchbook/benchbook/runtime"
)

// sqlArgs are workload.sql's own arguments.
type sqlArgs struct {
	db       starlark.Value
	query    string
	queries  starlark.Value
	args     starlark.Value
	requests starlark.Value // a mix (mix.go), None for one script
	seed     seedArg

	static  []any   // args as a list: what agents get (script)
	statics [][]any // each mix entry's (sqlMix)
}

// maxSQLInflight caps the default open-loop pool: every in-flight slot is
// a server connection, and PostgreSQL's default max_connections is 100.
const maxSQLInflight = 64

func sqlBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s := sqlArgs{queries: starlark.None, args: starlark.None, requests: starlark.None}
	la := newLoadArgs()
	pairs := append([]any{"db", &s.db, "query?", &s.query, "queries?", &s.queries, "args?", &s.args,
		"requests?", &s.requests, "seed?", &s.seed}, la.pairs()...)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, pairs...); err != nil {
		return nil, err
	}
	la.note(kwargs)
	if s.seed.given && s.requests == starlark.None {
		return nil, fmt.Errorf("%s: seed draws a mix's requests: give requests = [...] with it", b.Name())
	}
	spec, err := la.spec(b.Name(), th)
	if err != nil {
		return nil, err
	}
	if spec.Clients == 0 && la.maxInflight == starlark.None {
		spec.MaxInflight = min(spec.MaxInflight, maxSQLInflight)
	}
	var dest *guard.Dest
	if dsn, err := dsnOf(b.Name(), s.db); err == nil {
		dest = sqlDest(s.db, dsn)
		spec.Observers = withTargetGuards(th, spec.Observers, dest)
	}
	l := &load{name: b.Name(), la: la, spec: spec, dest: dest}
	if la.agents != nil {
		if l.fleet, err = s.onFleet(th, b.Name(), la.agents, &l.spec.Label); err != nil {
			return nil, err
		}
		return l.run(th)
	}
	tgt, check, err := s.target(b.Name(), th, spec)
	if err != nil {
		return nil, err
	}
	if l.spec.Label == "" {
		l.spec.Label = tgt.Statements()[0].SQL
		if s.requests != starlark.None {
			l.spec.Label = "mix of " + strings.Join(tgt.Tags(), ", ")
		}
	}
	l.tgt, l.close, l.scripts = tgt, tgt.Close, tgt.Scripts
	l.finish = func(res *loadgen.Result, warm *warmed) *Run {
		if w := check(); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
		run := newRun("sql", l.spec, res).noteWarmup(l.spec, warm)
		run.acquire, run.byStatement = tgt.Histograms()
		if sh := tgt.Shares(); sh != nil {
			run.mixed(s.seed.n, sh)
		}
		return run
	}
	return l.run(th)
}

// target converts db, query or queries and args, and opens the target.
func (s *sqlArgs) target(name string, th *starlark.Thread, spec loadgen.Spec) (*pgwire.SQLTarget, func() string, error) {
	sq := pgwire.SQLSpec{Conns: spec.Clients, Timeout: spec.Timeout}
	if sq.Conns == 0 {
		sq.Conns = spec.MaxInflight
	}
	var err error
	if sq.DSN, err = dsnOf(name, s.db); err != nil {
		return nil, nil, err
	}
	check, err := s.script(name, th, &sq, true)
	if err != nil {
		return nil, nil, err
	}
	// The run may write: the cluster's state is checked before it and
	// compared after the cell (runtime/state.go).
	if err := runtime.TouchValue(th, s.db); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	t, err := pgwire.OpenSQL(runtime.Context(th), sq)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, check, nil
}

// dsnOf accepts a DSN string or a handle with a dsn attribute.
func dsnOf(name string, db starlark.Value) (string, error) {
	if s, ok := starlark.AsString(db); ok {
		return s, nil
	}
	if h, ok := db.(starlark.HasAttrs); ok {
		if v, err := h.Attr("dsn"); err == nil && v != nil {
			if s, ok := starlark.AsString(v); ok {
				return s, nil
			}
		}
	}
	return "", fmt.Errorf("%s: db must be a DSN string or a handle with .dsn, got %s", name, db.Type())
}

// statements reads query or queries: a list of SQL strings (tagged by their
// first word) or a dict tag -> SQL.
func (s *sqlArgs) statements(name string) ([]pgwire.Statement, error) {
	var out []pgwire.Statement
	switch {
	case s.query != "" && s.queries != starlark.None:
		return nil, fmt.Errorf("%s: give query or queries, not both", name)
	case s.query != "":
		out = append(out, pgwire.Statement{SQL: s.query})
	case s.queries == starlark.None:
		return nil, fmt.Errorf("%s: query (a SQL string) or queries is required", name)
	default:
		var err error
		if out, err = queryList(name, s.queries); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func queryList(name string, v starlark.Value) ([]pgwire.Statement, error) {
	var out []pgwire.Statement
	switch v := v.(type) {
	case *starlark.Dict:
		for _, kv := range v.Items() {
			tag, ok1 := starlark.AsString(kv[0])
			q, ok2 := starlark.AsString(kv[1])
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("%s: queries: want tag -> SQL strings, got %s: %s", name, kv[0].Type(), kv[1].Type())
			}
			out = append(out, pgwire.Statement{Tag: tag, SQL: q})
		}
	case starlark.Indexable:
		for i := range v.Len() {
			q, ok := starlark.AsString(v.Index(i))
			if !ok {
				return nil, fmt.Errorf("%s: queries[%d]: want a SQL string, got %s", name, i, v.Index(i).Type())
			}
			out = append(out, pgwire.Statement{SQL: q})
		}
	default:
		return nil, fmt.Errorf("%s: queries must be a list of SQL strings or a dict tag -> SQL, got %s", name, v.Type())
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: queries is empty", name)
	}
	return out, nil
}

// script reads query or queries and args, or requests (a mix), into sq;
// gens says generators may run (not on agents).
func (s *sqlArgs) script(name string, th *starlark.Thread, sq *pgwire.SQLSpec, gens bool) (func() string, error) {
	sq.Seed = s.seed.n
	if s.requests != starlark.None {
		if s.query != "" || s.queries != starlark.None || s.args != starlark.None {
			return nil, fmt.Errorf("%s: give requests (a mix, each with its sql and args) or query, queries and args, not both", name)
		}
		return s.sqlMix(name, th, sq, gens)
	}
	var err error
	if sq.Statements, err = s.statements(name); err != nil {
		return nil, err
	}
	a, err := argGen(name+": args", th, s.args, gens)
	if err != nil {
		return nil, err
	}
	sq.Args, sq.TaggedArgs, s.static = a.plain, a.tagged, a.static
	return a.check, nil
}

// sqlMix reads requests = [{"sql": ..., "args": ..., "tag": ..., "weight": ...}].
func (s *sqlArgs) sqlMix(name string, th *starlark.Thread, sq *pgwire.SQLSpec, gens bool) (func() string, error) {
	entries, err := mixEntries(name, s.requests, "sql", "args")
	if err != nil {
		return nil, err
	}
	var cs []func() string
	for i, e := range entries {
		where := fmt.Sprintf("%s: requests[%d]", name, i)
		rq := pgwire.SQLRequest{}
		if rq.Tag, rq.Weight, err = tagAndWeight(name, i, e); err != nil {
			return nil, err
		}
		q, ok := e["sql"]
		if !ok {
			return nil, fmt.Errorf("%s: sql is required (a statement, or a list of them run in order)", where)
		}
		if str, isStr := starlark.AsString(q); isStr {
			rq.Statements = []pgwire.Statement{{SQL: str}}
		} else if rq.Statements, err = queryList(where+": sql", q); err != nil {
			return nil, err
		}
		a, err := argGen(where+": args", th, orNone(e["args"]), gens)
		if err != nil {
			return nil, err
		}
		if tagged := a.tagged; tagged != nil { // a mix's entry has its tag
			a.plain = func(seq int64) ([]any, error) {
				args, tag, err := tagged(seq)
				if err == nil && tag != "" {
					err = fmt.Errorf("args named tag %q: a mix's entry has its tag", tag)
				}
				return args, err
			}
		}
		rq.Args, cs = a.plain, append(cs, a.check)
		sq.Requests = append(sq.Requests, rq)
		s.statics = append(s.statics, a.static)
	}
	return checks(cs...), nil
}

func orNone(v starlark.Value) starlark.Value {
	if v == nil {
		return starlark.None
	}
	return v
}

// sqlArgGen is args as a generator: plain (a list, a gocode func) or
// tagged (a Starlark function, which may return {"args": [...], "tag": t}).
type sqlArgGen struct {
	plain  func(seq int64) ([]any, error)
	tagged func(seq int64) ([]any, string, error)
	check  func() string
	static []any // a list's values (agents get them)
}

// argGen reads args: None, a static list, a gocode func, or a Starlark
// callable; where names it in errors.
func argGen(where string, th *starlark.Thread, v starlark.Value, gens bool) (sqlArgGen, error) {
	g := sqlArgGen{check: noWarning}
	switch v := v.(type) {
	case starlark.NoneType:
		return g, nil
	case *starlark.List, starlark.Tuple:
		vals, err := goValues(v.(starlark.Indexable))
		if err != nil {
			return g, fmt.Errorf("%s: %w", where, err)
		}
		g.plain, g.static = func(int64) ([]any, error) { return vals, nil }, vals
		return g, nil
	}
	if !gens {
		return g, fmt.Errorf("%s = a function cannot run on agents (it lives in this process): give a list", where)
	}
	switch v := v.(type) {
	case interface{ Func() any }:
		recordGenInput(th, v)
		gen, err := goArgsGen(where, v.Func())
		g.plain = recovered(gen)
		return g, err
	case starlark.Callable:
		call, check := starlarkCaller(th, v)
		g.check = check
		g.tagged = func(seq int64) ([]any, string, error) {
			res, err := call(seq)
			if err != nil {
				return nil, "", err
			}
			return taggedArgs(res)
		}
		return g, nil
	}
	return g, fmt.Errorf("%s must be a list, a function or None, got %s", where, v.Type())
}

// taggedArgs reads what an args function returned: a list, or a dict
// {"args": [...], "tag": t} naming the request's tag.
func taggedArgs(v starlark.Value) ([]any, string, error) {
	var tag string
	if d, ok := v.(*starlark.Dict); ok {
		var args starlark.Value = starlark.NewList(nil)
		for _, kv := range d.Items() {
			switch k, _ := starlark.AsString(kv[0]); k {
			case "tag":
				s, ok := starlark.AsString(kv[1])
				if !ok {
					return nil, "", fmt.Errorf("args returned tag = %s, want a string", kv[1].Type())
				}
				tag = s
			case "args":
				args = kv[1]
			default:
				return nil, "", fmt.Errorf("args returned a dict with %s: it takes args and tag", kv[0])
			}
		}
		v = args
	}
	l, ok := v.(starlark.Indexable)
	if !ok {
		return nil, "", fmt.Errorf("args returned %s, want a list", v.Type())
	}
	vals, err := goValues(l)
	return vals, tag, err
}

func goArgsGen(name string, f any) (func(int64) ([]any, error), error) {
	switch f := f.(type) {
	case func() []any:
		return func(int64) ([]any, error) { return f(), nil }, nil
	case func(int64) []any:
		return func(seq int64) ([]any, error) { return f(seq), nil }, nil
	}
	return nil, fmt.Errorf("%s: a Go function must be func() []any or func(int64) []any, got %T", name, f)
}

// goValues converts Starlark query arguments to Go values pgx encodes.
func goValues(l starlark.Indexable) ([]any, error) {
	out := make([]any, l.Len())
	for i := range out {
		switch v := l.Index(i).(type) {
		case starlark.NoneType:
			out[i] = nil
		case starlark.Bool:
			out[i] = bool(v)
		case starlark.Int:
			n, ok := v.Int64()
			if !ok {
				return nil, fmt.Errorf("arg %d: %s does not fit in int64", i, v)
			}
			out[i] = n
		case starlark.Float:
			out[i] = float64(v)
		case starlark.String:
			out[i] = string(v)
		case starlark.Bytes:
			out[i] = []byte(v)
		default:
			return nil, fmt.Errorf("arg %d: cannot pass a %s to SQL", i, v.Type())
		}
	}
	return out, nil
}
