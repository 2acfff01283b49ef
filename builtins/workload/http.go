package workload

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
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
	insecure bool // skip TLS certificate verification
}

func httpBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	h := httpArgs{method: "GET", body: starlark.None, request: starlark.None}
	la := newLoadArgs()
	pairs := append([]any{"url", &h.url, "method?", &h.method, "headers?", &h.headers,
		"body?", &h.body, "request?", &h.request, "insecure?", &h.insecure}, la.pairs()...)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, pairs...); err != nil {
		return nil, err
	}
	spec, err := la.spec(b.Name(), th)
	if err != nil {
		return nil, err
	}
	dest := urlDest(h.url)
	spec.Observers = withTargetGuards(th, spec.Observers, dest)
	if spec.Label == "" {
		spec.Label = h.method + " " + h.url
	}
	if la.agents != nil {
		return profiled(th, b.Name(), la, &spec, dest, func() (starlark.Value, error) { return h.onFleet(th, b.Name(), spec, la.agents) })
	}
	tgt, check, err := h.target(b.Name(), th, spec.Timeout)
	if err != nil {
		return nil, err
	}
	prof, err := la.profile.start(b.Name(), th, la.observe, dest)
	if err != nil {
		return nil, err
	}
	spec.Observers = prof.observing(spec.Observers)
	res, warm := la.measure(runtime.Context(th), spec, tgt)
	if w := check(); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	if e := tgt.GenErr(); e != "" {
		res.Warnings = append(res.Warnings, "request generator failed: "+e)
	}
	run := newRun("http", spec, res).noteWarmup(spec, warm)
	return run, prof.attach(run)
}

// target converts url, headers, body and request into a loadgen target.
func (h *httpArgs) target(name string, th *starlark.Thread, timeout time.Duration) (*loadgen.HTTPTarget, func() string, error) {
	spec := loadgen.HTTPSpec{URL: h.url, Method: h.method, Insecure: h.insecure, Timeout: timeout}
	var err error
	if spec.Headers, err = headerPairs(name, h.headers); err != nil {
		return nil, nil, err
	}
	if spec.Body, err = bodyBytes(name, h.body); err != nil {
		return nil, nil, err
	}
	check, err := h.generator(name, th, &spec)
	if err != nil {
		return nil, nil, err
	}
	t, err := loadgen.NewHTTPTarget(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, check, nil
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
// run: see starlarkCaller).
func (h *httpArgs) generator(name string, th *starlark.Thread, t *loadgen.HTTPSpec) (func() string, error) {
	if h.request == starlark.None {
		return noWarning, nil
	}
	if g, ok := h.request.(interface{ Func() any }); ok {
		recordGenInput(th, g)
		gen, err := goPathGen(name, g.Func())
		t.Gen = recovered(gen)
		return noWarning, err
	}
	fn, ok := h.request.(starlark.Callable)
	if !ok {
		return nil, fmt.Errorf("%s: request must be a function, got %s", name, h.request.Type())
	}
	call, check := starlarkCaller(th, fn)
	t.Gen = func(seq int64) (string, error) {
		v, err := call(seq)
		if err != nil {
			return "", err
		}
		s, ok := starlark.AsString(v)
		if !ok {
			return "", fmt.Errorf("request returned %s, want a string", v.Type())
		}
		return s, nil
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
	return nil, fmt.Errorf("%s: request: a Go function must be func() string, func(int64) string or func(int) string, got %T", name, f)
}

// starlarkCaller calls fn on th, one call at a time, with the request
// number when fn takes a parameter. A panic becomes an error. The check it
// returns, called after the run, warns when those calls kept the generator
// busy for much of the run: then they, not the target, may have set the rate.
func starlarkCaller(th *starlark.Thread, fn starlark.Callable) (call func(seq int64) (starlark.Value, error), check func() string) {
	var mu sync.Mutex
	var busy time.Duration
	withSeq := true
	if f, ok := fn.(*starlark.Function); ok && f.NumParams() == 0 {
		withSeq = false
	}
	call = func(seq int64) (v starlark.Value, err error) {
		mu.Lock()
		t0 := time.Now()
		defer func() {
			busy += time.Since(t0)
			mu.Unlock()
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
	check = func() string {
		mu.Lock()
		defer mu.Unlock()
		share := busy.Seconds() / time.Since(start).Seconds()
		if share < busyGenShare {
			return ""
		}
		return fmt.Sprintf("the Starlark request generator was busy %.0f%% of the run, one call at a time: it may have limited the request rate (a gocode function is faster)", share*100)
	}
	return call, check
}

// busyGenShare is the share of a run spent in a Starlark generator above
// which the run says the generator may have been the bottleneck.
const busyGenShare = 0.2

func noWarning() string { return "" }
