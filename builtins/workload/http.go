package workload

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime"
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
	tgt, check, err := h.target(b.Name(), th)
	if err != nil {
		return nil, err
	}
	tgt.timeout = spec.timeout
	if spec.label == "" {
		spec.label = h.method + " " + h.url
	}
	res := runLoad(runtime.Context(th), spec, tgt)
	if w := check(); w != "" {
		res.warnings = append(res.warnings, w)
	}
	if e, ok := tgt.genErr.Load().(string); ok {
		res.warnings = append(res.warnings, "request generator failed: "+e)
	}
	return newRun("http", spec, res), nil
}

// target checks url, headers and body and prepares the request.
func (h *httpArgs) target(name string, th *starlark.Thread) (*httpTarget, func() string, error) {
	u, err := url.Parse(h.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, fmt.Errorf("%s: url: malformed URL %q (want http://host[:port]/path)", name, h.url)
	}
	t := &httpTarget{addr: hostPort(u), host: u.Host, method: strings.ToUpper(h.method), base: u.RequestURI()}
	if u.Scheme == "https" {
		// insecure: a test server's self-signed certificate, as wrk and
		// vegeta -insecure accept.
		t.tls = &tls.Config{ServerName: u.Hostname(), InsecureSkipVerify: h.insecure}
	}
	t.noBody = t.method == "HEAD"
	if t.headers, err = headerLines(name, h.headers); err != nil {
		return nil, nil, err
	}
	if hasHostHeader(h.headers) {
		t.host = "" // the user's Host header is in headers
	}
	if t.body, err = bodyBytes(name, h.body); err != nil {
		return nil, nil, err
	}
	check, err := h.generator(name, th, t)
	if err != nil {
		return nil, nil, err
	}
	if t.gen == nil {
		t.static = t.appendRequest(nil, t.base)
	}
	return t, check, nil
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

func headerLines(name string, d *starlark.Dict) ([]byte, error) {
	if d == nil {
		return nil, nil
	}
	var lines []string
	for _, kv := range d.Items() {
		k, ok1 := starlark.AsString(kv[0])
		v, ok2 := starlark.AsString(kv[1])
		if !ok1 || !ok2 || strings.ContainsAny(k+v, "\r\n") || k == "" {
			return nil, fmt.Errorf("%s: headers: want string names and values without newlines, got %s: %s", name, kv[0], kv[1])
		}
		lines = append(lines, k+": "+v+"\r\n")
	}
	sort.Strings(lines)
	return []byte(strings.Join(lines, "")), nil
}

func hasHostHeader(d *starlark.Dict) bool {
	if d == nil {
		return false
	}
	for _, k := range d.Keys() {
		if s, ok := starlark.AsString(k); ok && strings.EqualFold(s, "host") {
			return true
		}
	}
	return false
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
func (h *httpArgs) generator(name string, th *starlark.Thread, t *httpTarget) (func() string, error) {
	if h.request == starlark.None {
		return noWarning, nil
	}
	if g, ok := h.request.(interface{ Func() any }); ok {
		recordGenInput(th, g)
		gen, err := goPathGen(name, g.Func())
		t.gen = recovered(gen)
		return noWarning, err
	}
	fn, ok := h.request.(starlark.Callable)
	if !ok {
		return nil, fmt.Errorf("%s: request must be a function, got %s", name, h.request.Type())
	}
	call, check := starlarkCaller(th, fn)
	t.gen = func(seq int64) (string, error) {
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

// sameHostURI returns the request URI of a full URL made by a generator,
// if it points at the run's own host.
func sameHostURI(raw string, t *httpTarget) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || hostPort(u) != t.addr {
		return "", false
	}
	return u.RequestURI(), true
}
