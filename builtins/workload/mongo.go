package workload

import (
	"fmt"
	"net/url"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/mongowire"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/redact"
)

// mongoArgs are workload.mongo's own arguments.
type mongoArgs struct {
	target     starlark.Value // a URI or a backend.mongo handle
	op         string
	collection string
	db         string
	request    starlark.Value
	requests   starlark.Value // a mix (mix.go), None for one request
	seed       seedArg
}

// maxMongoInflight caps the default open-loop pool, as for sql: every
// in-flight slot is a server connection.
const maxMongoInflight = 64

// mongoBuiltin is workload.mongo(target, op, collection, db = "", request = {}, ...).
func mongoBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	m := mongoArgs{request: starlark.None, requests: starlark.None}
	la := newLoadArgs()
	pairs := append([]any{"target", &m.target, "op?", &m.op, "collection?", &m.collection, "db?", &m.db, "request?", &m.request,
		"requests?", &m.requests, "seed?", &m.seed}, la.pairs()...)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, pairs...); err != nil {
		return nil, err
	}
	la.note(kwargs)
	switch {
	case m.seed.given && m.requests == starlark.None:
		return nil, fmt.Errorf("%s: seed draws a mix's requests: give requests = [...] with it", b.Name())
	case m.requests != starlark.None && m.request != starlark.None:
		return nil, fmt.Errorf("%s: give requests (a mix, each with its request) or request, not both", b.Name())
	case m.requests == starlark.None && m.op == "":
		return nil, fmt.Errorf("%s: op is required (one of %s), or requests = [...]", b.Name(), strings.Join(mongowire.MongoOps, ", "))
	}
	spec, err := la.spec(b.Name(), th)
	if err != nil {
		return nil, err
	}
	if la.agents != nil {
		return nil, fmt.Errorf("%s: agents: not supported for mongo yet", b.Name())
	}
	if spec.Clients == 0 && la.maxInflight == starlark.None {
		spec.MaxInflight = min(spec.MaxInflight, maxMongoInflight)
	}
	var dest *guard.Dest
	if uri, _, err := m.where(b.Name()); err == nil {
		dest = urlDest(uri)
		if _, isString := m.target.(starlark.String); !isString {
			dest.Target = m.target
		}
		spec.Observers = withTargetGuards(th, spec.Observers, dest)
	}
	tgt, check, err := m.open(b.Name(), th, spec)
	if err != nil {
		return nil, err
	}
	l := &load{name: b.Name(), la: la, spec: spec, dest: dest, tgt: tgt, close: tgt.Close}
	if l.spec.Label == "" {
		l.spec.Label = m.op + " " + m.db + "." + m.collection
		if m.requests != starlark.None {
			l.spec.Label = "mix of " + strings.Join(tgt.Tags(), ", ")
		}
	}
	l.finish = func(res *loadgen.Result, warm *warmed) *Run {
		if w := check(); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
		run := mongoRun(l.spec, res, tgt).noteWarmup(l.spec, warm)
		if sh := tgt.Shares(); sh != nil {
			run.mixed(m.seed.n, sh)
		}
		return run
	}
	return l.run(th)
}

// mongoRun makes the run object; the one place a Mongo run is built.
func mongoRun(spec loadgen.Spec, res *loadgen.Result, tgt *mongowire.MongoTarget) *Run {
	if res.Observed == nil {
		res.Observed = map[string]float64{}
	}
	if res.Count > 0 {
		res.Observed["docs_per_req"] = float64(tgt.Docs()) / float64(res.Count)
	}
	return newRun("mongo", spec, res)
}

// open converts the arguments and connects.
func (m *mongoArgs) open(name string, th *starlark.Thread, spec loadgen.Spec) (*mongowire.MongoTarget, func() string, error) {
	ms := mongowire.MongoSpec{Op: m.op, Collection: m.collection, Conns: spec.Clients, Timeout: spec.Timeout, Seed: m.seed.n}
	if ms.Conns == 0 {
		ms.Conns = spec.MaxInflight
	}
	var err error
	if ms.URI, ms.Database, err = m.where(name); err != nil {
		return nil, nil, err
	}
	m.db = ms.Database
	var check func() string
	if m.requests != starlark.None {
		check, err = m.mongoMix(name, th, &ms)
	} else {
		var gen mongoGen
		gen, err = requestGen(name, th, m.op, m.collection, m.request)
		ms.Request, ms.Tagged, check = gen.f, gen.tagged, gen.check
	}
	if err != nil {
		return nil, nil, err
	}
	// The run may write: the database's state is checked before it and
	// compared after the cell (backend/mongo/state.go).
	if err := runtime.TouchValue(th, m.target); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	t, err := mongowire.OpenMongo(runtime.Context(th), ms)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s", name, redact.String(err.Error()))
	}
	return t, check, nil
}

// where reads the URI and database from target (a string or a handle) and db.
func (m *mongoArgs) where(name string) (uri, db string, err error) {
	switch t := m.target.(type) {
	case handle.Mongo: // a backend.mongo value
		uri, db = t.ConnURI(), t.Database()
	case starlark.String:
		uri = string(t)
		redact.Learn("uri", uri)
		if u, perr := url.Parse(uri); perr == nil {
			db = strings.TrimPrefix(u.Path, "/")
		}
	default:
		return "", "", fmt.Errorf("%s: target must be a mongodb:// URI or a backend.mongo handle, got %s", name, m.target.Type())
	}
	if m.db != "" {
		db = m.db
	}
	if db == "" {
		return "", "", fmt.Errorf("%s: db is required (or a database in the URI's path)", name)
	}
	return uri, db, nil
}

// mongoGen is a request's arguments per request seq.
type mongoGen struct {
	f      func(seq int64) (*mongowire.MongoRequest, error)
	tagged bool // a generator that may name each request's tag
	check  func() string
}

// requestGen reads request: a dict, a gocode func, or a Starlark callable,
// for op on collection; where names it in errors.
func requestGen(where string, th *starlark.Thread, op, collection string, request starlark.Value) (mongoGen, error) {
	g := mongoGen{check: noWarning}
	if _, ok := mongoFields[op]; !ok {
		return g, fmt.Errorf("%s: op must be one of %s, got %q", where, strings.Join(mongowire.MongoOps, ", "), op)
	}
	if collection == "" {
		return g, fmt.Errorf("%s: collection is required", where)
	}
	switch v := request.(type) {
	case starlark.NoneType, *starlark.Dict:
		if v == starlark.None {
			v = starlark.NewDict(0)
		}
		req, err := starlarkRequest(op, v)
		if err != nil {
			return g, fmt.Errorf("%s: request: %w", where, err)
		}
		g.f = func(int64) (*mongowire.MongoRequest, error) { return req, nil }
		return g, nil
	case interface{ Func() any }:
		recordGenInput(th, v)
		gen, err := goMongoGen(where, op, v.Func())
		g.f, g.tagged = recovered(gen), true
		return g, err
	case starlark.Callable:
		call, check := starlarkCaller(th, v)
		g.f, g.tagged, g.check = func(seq int64) (*mongowire.MongoRequest, error) {
			res, err := call(seq)
			if err != nil {
				return nil, err
			}
			return starlarkRequest(op, res)
		}, true, check
		return g, nil
	}
	return g, fmt.Errorf("%s: request must be a dict, a function or None, got %s", where, request.Type())
}

// mongoMix reads requests = [{"op", "collection", "request", "tag", "weight"}]:
// op and collection default to the call's.
func (m *mongoArgs) mongoMix(name string, th *starlark.Thread, ms *mongowire.MongoSpec) (func() string, error) {
	entries, err := mixEntries(name, m.requests, "op", "collection", "request")
	if err != nil {
		return nil, err
	}
	var cs []func() string
	for i, e := range entries {
		where := fmt.Sprintf("%s: requests[%d]", name, i)
		k := mongowire.MongoKind{Op: m.op, Collection: m.collection}
		if k.Tag, k.Weight, err = tagAndWeight(name, i, e); err != nil {
			return nil, err
		}
		for key, p := range map[string]*string{"op": &k.Op, "collection": &k.Collection} {
			if v, ok := e[key]; ok {
				if *p, ok = starlark.AsString(v); !ok {
					return nil, fmt.Errorf("%s: %s must be a string, got %s", where, key, v.Type())
				}
			}
		}
		gen, err := requestGen(where, th, k.Op, k.Collection, orNone(e["request"]))
		if err != nil {
			return nil, err
		}
		k.Request, cs = gen.f, append(cs, gen.check)
		ms.Requests = append(ms.Requests, k)
	}
	return checks(cs...), nil
}

func goMongoGen(name, op string, f any) (func(int64) (*mongowire.MongoRequest, error), error) {
	switch f := f.(type) {
	case func() map[string]any:
		return func(int64) (*mongowire.MongoRequest, error) { return goRequest(op, f()) }, nil
	case func(int64) map[string]any:
		return func(seq int64) (*mongowire.MongoRequest, error) { return goRequest(op, f(seq)) }, nil
	}
	return nil, fmt.Errorf("%s: request: a Go function must be func() map[string]any or func(int64) map[string]any, got %T", name, f)
}
