package workload

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/h1wire"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/redact"
)

// httpArgs are workload.http's own arguments.
type httpArgs struct {
	url      string
	method   string
	headers  *starlark.Dict
	body     starlark.Value
	request  starlark.Value
	insecure bool           // skip TLS certificate verification
	requests starlark.Value // a mix (mix.go), None for one request
	seed     seedArg        // the mix's draw
}

func httpBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	h := httpArgs{method: "GET", body: starlark.None, request: starlark.None, requests: starlark.None}
	la := newLoadArgs()
	pairs := append([]any{"url?", &h.url, "method?", &h.method, "headers?", &h.headers,
		"body?", &h.body, "request?", &h.request, "insecure?", &h.insecure,
		"requests?", &h.requests, "seed?", &h.seed}, la.pairs()...)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, pairs...); err != nil {
		return nil, err
	}
	la.note(kwargs)
	if err := h.check(b.Name()); err != nil {
		return nil, err
	}
	spec, err := la.spec(b.Name(), th)
	if err != nil {
		return nil, err
	}
	dest := urlDest(h.dest())
	spec.Observers = withTargetGuards(th, spec.Observers, dest)
	if spec.Label == "" {
		spec.Label = h.method + " " + h.url
		if h.requests != starlark.None {
			spec.Label = "mix " + h.dest()
		}
	}
	l := &load{name: b.Name(), la: la, spec: spec, dest: dest}
	if la.agents != nil {
		if l.fleet, err = h.onFleet(th, b.Name(), la.agents); err != nil {
			return nil, err
		}
		return l.run(th)
	}
	tgt, check, err := h.target(b.Name(), th, spec.Timeout)
	if err != nil {
		return nil, err
	}
	l.tgt = tgt
	l.finish = func(res *loadgen.Result, warm *warmed) *Run {
		if w := check(); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
		if e := tgt.GenErr(); e != "" {
			res.Warnings = append(res.Warnings, "request generator failed: "+e)
		}
		run := newRun("http", l.spec, res).noteWarmup(l.spec, warm)
		if sh := tgt.Shares(); sh != nil {
			run.mixed(h.seed.n, sh)
		}
		return run
	}
	return l.run(th)
}

// check refuses arguments that do not go together.
func (h *httpArgs) check(name string) error {
	switch {
	case h.requests == starlark.None && h.url == "":
		return fmt.Errorf("%s: url is required (or requests = [...], a mix)", name)
	case h.requests != starlark.None && h.request != starlark.None:
		return fmt.Errorf("%s: give requests (a mix) or request (a generator), not both", name)
	case h.seed.given && h.requests == starlark.None:
		return fmt.Errorf("%s: seed draws a mix's requests: give requests = [...] with it", name)
	}
	return nil
}

// dest is the URL the run sends to: url, or a mix's first request's.
func (h *httpArgs) dest() string {
	if h.url != "" {
		return h.url
	}
	if l, ok := h.requests.(starlark.Indexable); ok && l.Len() > 0 {
		if d, ok := l.Index(0).(*starlark.Dict); ok {
			if v, found, _ := d.Get(starlark.String("url")); found {
				if s, ok := starlark.AsString(v); ok {
					return s
				}
			}
		}
	}
	return ""
}

// target converts url, headers, body, request and requests into a
// loadgen target.
func (h *httpArgs) target(name string, th *starlark.Thread, timeout time.Duration) (*h1wire.HTTPTarget, func() string, error) {
	spec, check, err := h.spec(name, th, true)
	if err != nil {
		return nil, nil, err
	}
	spec.Timeout = timeout
	t, err := h1wire.NewHTTPTarget(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, check, nil
}

// spec converts the arguments into a loadgen spec; gens says generators
// may run (not on agents).
func (h *httpArgs) spec(name string, th *starlark.Thread, gens bool) (h1wire.HTTPSpec, func() string, error) {
	spec := h1wire.HTTPSpec{URL: h.url, Method: h.method, Insecure: h.insecure, Seed: h.seed.n}
	var err error
	if spec.Headers, err = headerPairs(name, h.headers); err != nil {
		return spec, nil, err
	}
	if spec.Body, err = bodyBytes(name, h.body); err != nil {
		return spec, nil, err
	}
	if h.requests != starlark.None {
		check, err := h.httpMix(name, th, &spec, gens)
		return spec, check, err
	}
	if !gens && h.request != starlark.None {
		return spec, nil, fmt.Errorf("%s: request = a function cannot run on agents (it lives in this process): give url, headers and body", name)
	}
	check, err := h.generator(name, th, &spec)
	return spec, check, err
}

func headerPairs(name string, d *starlark.Dict) ([][2]string, error) {
	if d == nil {
		return nil, nil
	}
	var out [][2]string
	for _, kv := range d.Items() {
		k, ok1 := starlark.AsString(kv[0])
		v, ok2 := starlark.AsString(kv[1])
		if !ok1 || !ok2 || strings.ContainsAny(k+v, "\r\n") || k == "" {
			return nil, fmt.Errorf("%s: headers: want string names and values without newlines, got %s: %s", name, kv[0], kv[1])
		}
		redact.Learn(k, v) // Authorization: Bearer T, however the dict was built
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

func bodyBytes(name string, v starlark.Value) ([]byte, error) {
	switch v := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.String:
		return []byte(v), nil
	case starlark.Bytes:
		return []byte(v), nil
	}
	return nil, fmt.Errorf("%s: body must be a string, bytes or None, got %s", name, v.Type())
}

// generator installs request = fn: a gocode Go func called directly, or a
// Starlark callable serialized behind a mutex (with a check for after the
// run: see starlarkCaller). A Starlark generator may name each request's
// tag (taggedRequest); one that names none leaves the run untagged.
func (h *httpArgs) generator(name string, th *starlark.Thread, t *h1wire.HTTPSpec) (func() string, error) {
	if h.request == starlark.None {
		return noWarning, nil
	}
	if g, ok := h.request.(interface{ Func() any }); ok {
		recordGenInput(th, g)
		if f, ok := g.Func().(func(int64) (string, string)); ok {
			t.Tagged = recovered(func(seq int64) (h1wire.HTTPRequest, error) {
				p, tag := f(seq)
				return h1wire.HTTPRequest{URL: p, Tag: tag}, nil
			})
			return noWarning, nil
		}
		gen, err := goPathGen(name, g.Func())
		t.Gen = recovered(gen)
		return noWarning, err
	}
	fn, ok := h.request.(starlark.Callable)
	if !ok {
		return nil, fmt.Errorf("%s: request must be a function, got %s", name, h.request.Type())
	}
	call, check := starlarkCaller(th, fn)
	t.Tagged = func(seq int64) (h1wire.HTTPRequest, error) {
		v, err := call(seq)
		if err != nil {
			return h1wire.HTTPRequest{}, err
		}
		return taggedRequest(v)
	}
	return check, nil
}

// recovered turns a panic in a Go generator into an error for that request:
// a gocode function panics with an error naming its file and line.
func recovered[T any](f func(int64) (T, error)) func(int64) (T, error) {
	if f == nil {
		return nil
	}
	return func(seq int64) (v T, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("generator panicked: %v", r)
			}
		}()
		return f(seq)
	}
}

// recordGenInput makes a gocode generator's source an input of the cell, so
// editing the Go file makes the run stale.
func recordGenInput(th *starlark.Thread, g any) {
	if in, ok := g.(interface{ Input() runtime.Input }); ok {
		runtime.AddInput(th, in.Input())
	}
}

func goPathGen(name string, f any) (func(int64) (string, error), error) {
	switch f := f.(type) {
	case func() string:
		return func(int64) (string, error) { return f(), nil }, nil
	case func(int64) string:
		return func(seq int64) (string, error) { return f(seq), nil }, nil
	case func(int) string:
		return func(seq int64) (string, error) { return f(int(seq)), nil }, nil
	}
	return nil, fmt.Errorf("%s: request: a Go function must be func() string, func(int64) string, func(int) string or func(int64) (path, tag string), got %T", name, f)
}

// starlarkCaller calls fn on th, one call at a time, with the request
// number when fn takes a parameter. A panic becomes an error. The check it
// returns, called after the run, warns when those calls kept the generator
// busy for much of the run: then they, not the target, may have set the rate.
//
// Every generator of one thread (a mix's url functions, a group's
// scenarios') takes the same lock: a Starlark thread runs one call at a
// time, whichever function it is.
func starlarkCaller(th *starlark.Thread, fn starlark.Callable) (call func(seq int64) (starlark.Value, error), check func() string) {
	g := genCallsOf(th)
	withSeq := true
	if f, ok := fn.(*starlark.Function); ok && f.NumParams() == 0 {
		withSeq = false
	}
	call = func(seq int64) (v starlark.Value, err error) {
		g.mu.Lock()
		t0 := time.Now()
		defer func() {
			g.busy += time.Since(t0)
			g.mu.Unlock()
			if r := recover(); r != nil {
				err = fmt.Errorf("generator panicked: %v", r)
			}
		}()
		var args starlark.Tuple
		if withSeq {
			args = starlark.Tuple{starlark.MakeInt64(seq)}
		}
		return starlark.Call(th, fn, args, nil)
	}
	start := time.Now()
	g.mu.Lock()
	busy0 := g.busy
	g.mu.Unlock()
	check = func() string {
		g.mu.Lock()
		defer g.mu.Unlock()
		share := (g.busy - busy0).Seconds() / time.Since(start).Seconds()
		if share < busyGenShare {
			return ""
		}
		return fmt.Sprintf("the Starlark request generators were busy %.0f%% of the run, one call at a time: they may have limited the request rate (a gocode function is faster)", share*100)
	}
	return call, check
}

// genCalls are a thread's calls of Starlark generators from the load's
// goroutines: one at a time, and how long they took.
type genCalls struct {
	mu   sync.Mutex
	busy time.Duration
}

func genCallsOf(th *starlark.Thread) *genCalls {
	const key = "benchbook.workload.gencalls"
	if g, ok := th.Local(key).(*genCalls); ok {
		return g
	}
	g := &genCalls{}
	th.SetLocal(key, g)
	return g
}

// busyGenShare is the share of a run spent in a Starlark generator above
// which the run says the generator may have been the bottleneck.
const busyGenShare = 0.2

func noWarning() string { return "" }
