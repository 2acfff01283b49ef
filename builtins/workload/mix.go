package workload

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/workload/loadgen/h1wire"
	"github.com/benchbook/benchbook/runtime/redact"
)

// Mixes: requests = [{...}, ...] on workload.http, sql and mongo. Each
// request of the run is one of the entries, drawn by weight from a seeded
// stream (loadgen.Mix; seed = ..., recorded in the run), and counted under
// the entry's tag: run.by_tag[tag] is that tag's run.
//
//	http:  {"url": path or URL or fn(seq), "method", "body", "headers", "tag", "weight"}
//	sql:   {"sql": statement or [statements], "args": list or fn(seq), "tag", "weight"}
//	mongo: {"op", "collection", "request": dict or fn(seq), "tag", "weight"}
//
// An entry leaves out what the builtin's own arguments give (method,
// headers and body; mongo's op and collection). Entries may share a tag;
// the default tag is "METHOD path", the script's first statement tag
// ("SELECT"), or "op collection".

// seedArg is seed = N: a mix's draw, 0..2^63-1.
type seedArg struct {
	n     uint64
	given bool
}

func (s *seedArg) Unpack(v starlark.Value) error {
	i, ok := v.(starlark.Int)
	n, exact := i.Int64()
	if !ok || !exact || n < 0 {
		return fmt.Errorf("seed must be an int >= 0, got %s", v)
	}
	s.n, s.given = uint64(n), true
	return nil
}

// mixEntries reads requests = [...]: a non-empty list of dicts whose keys
// are among allowed (a typo is an error naming the entry and the key).
func mixEntries(name string, v starlark.Value, allowed ...string) ([]map[string]starlark.Value, error) {
	l, ok := v.(starlark.Indexable)
	if _, isDict := v.(*starlark.Dict); !ok || isDict {
		return nil, fmt.Errorf("%s: requests must be a list of dicts, got %s", name, v.Type())
	}
	if l.Len() == 0 {
		return nil, fmt.Errorf("%s: requests is empty", name)
	}
	allowed = append(allowed, "tag", "weight")
	out := make([]map[string]starlark.Value, l.Len())
	for i := range l.Len() {
		d, ok := l.Index(i).(*starlark.Dict)
		if !ok {
			return nil, fmt.Errorf("%s: requests[%d] must be a dict, got %s", name, i, l.Index(i).Type())
		}
		out[i] = map[string]starlark.Value{}
		for _, kv := range d.Items() {
			k, _ := starlark.AsString(kv[0])
			if !slices.Contains(allowed, k) {
				return nil, fmt.Errorf("%s: requests[%d]: unknown key %s (an entry takes %s)", name, i, kv[0], strings.Join(allowed, ", "))
			}
			out[i][k] = kv[1]
		}
	}
	return out, nil
}

// tagAndWeight reads an entry's tag (a non-empty string, "" when absent)
// and weight (a number > 0, 1 when absent).
func tagAndWeight(name string, i int, e map[string]starlark.Value) (string, float64, error) {
	tag, w := "", 1.0
	if v, ok := e["tag"]; ok {
		s, isStr := starlark.AsString(v)
		if !isStr || strings.TrimSpace(s) == "" || strings.ContainsAny(s, "[]") {
			return "", 0, fmt.Errorf("%s: requests[%d]: tag must be a non-empty string without [ or ], got %s", name, i, v)
		}
		tag = s
	}
	if v, ok := e["weight"]; ok {
		f, isNum := starlark.AsFloat(v)
		if !isNum || !(f > 0) || math.IsInf(f, 0) {
			return "", 0, fmt.Errorf("%s: requests[%d]: weight must be a number > 0, got %s", name, i, v)
		}
		w = f
	}
	return tag, w, nil
}

// checks joins the after-run checks of several generators.
func checks(fs ...func() string) func() string {
	return func() string {
		var out []string
		for _, f := range fs {
			if s := f(); s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return strings.Join(out, "; ")
	}
}

// httpMix reads workload.http's requests = [...] into spec.Requests.
// gens says whether generators are allowed (not on agents).
func (h *httpArgs) httpMix(name string, th *starlark.Thread, spec *h1wire.HTTPSpec, gens bool) (func() string, error) {
	entries, err := mixEntries(name, h.requests, "url", "method", "body", "headers")
	if err != nil {
		return nil, err
	}
	var cs []func() string
	for i, e := range entries {
		rq := h1wire.HTTPRequest{}
		if rq.Tag, rq.Weight, err = tagAndWeight(name, i, e); err != nil {
			return nil, err
		}
		where := fmt.Sprintf("%s: requests[%d]", name, i)
		switch u := e["url"].(type) {
		case nil:
			if h.url == "" {
				return nil, fmt.Errorf("%s: url is required (or give url = ... to the call)", where)
			}
		case starlark.String:
			rq.URL = string(u)
			redact.String(rq.URL) // ?access_token=T: hidden in its default tag, as in a run's label
		default:
			if !gens {
				return nil, fmt.Errorf("%s: url = a function cannot run on agents (it lives in this process): give a string", where)
			}
			gen, check, err := pathGen(where+": url", th, u)
			if err != nil {
				return nil, err
			}
			rq.Gen, cs = gen, append(cs, check)
		}
		if v, ok := e["method"]; ok {
			if rq.Method, ok = starlark.AsString(v); !ok || rq.Method == "" {
				return nil, fmt.Errorf("%s: method must be a string, got %s", where, v)
			}
		}
		if v, ok := e["body"]; ok {
			if rq.Body, err = bodyBytes(where, v); err != nil {
				return nil, err
			}
			if rq.Body == nil {
				rq.Body = []byte{}
			}
		}
		if v, ok := e["headers"]; ok {
			d, isDict := v.(*starlark.Dict)
			if !isDict {
				return nil, fmt.Errorf("%s: headers must be a dict, got %s", where, v.Type())
			}
			if rq.Headers, err = headerPairs(where, d); err != nil {
				return nil, err
			}
		}
		spec.Requests = append(spec.Requests, rq)
	}
	if spec.URL == "" {
		spec.URL = spec.Requests[0].URL
	}
	return checks(cs...), nil
}

// pathGen is a mix entry's url = fn(seq): a gocode function or a
// Starlark callable returning a path or same-host URL.
func pathGen(where string, th *starlark.Thread, v starlark.Value) (func(int64) (string, error), func() string, error) {
	if g, ok := v.(interface{ Func() any }); ok {
		recordGenInput(th, g)
		gen, err := goPathGen(where, g.Func())
		return recovered(gen), noWarning, err
	}
	fn, ok := v.(starlark.Callable)
	if !ok {
		return nil, nil, fmt.Errorf("%s must be a string or a function, got %s", where, v.Type())
	}
	call, check := starlarkCaller(th, fn)
	return func(seq int64) (string, error) {
		v, err := call(seq)
		if err != nil {
			return "", err
		}
		s, ok := starlark.AsString(v)
		if !ok {
			return "", fmt.Errorf("url returned %s, want a string", v.Type())
		}
		return s, nil
	}, check, nil
}

// taggedRequest converts what a request generator returned: a path (or
// same-host URL), a (path, tag) tuple, or a dict with url, method, body,
// headers and tag.
func taggedRequest(v starlark.Value) (h1wire.HTTPRequest, error) {
	var rq h1wire.HTTPRequest
	switch x := v.(type) {
	case starlark.String:
		rq.URL = string(x)
		return rq, nil
	case starlark.Tuple:
		p, ok1 := starlark.AsString(x.Index(0))
		if x.Len() != 2 {
			ok1 = false
		}
		var tag string
		var ok2 bool
		if ok1 {
			tag, ok2 = starlark.AsString(x.Index(1))
		}
		if !ok1 || !ok2 {
			return rq, fmt.Errorf("request returned %s, want a path, (path, tag) or a dict", x)
		}
		rq.URL, rq.Tag = p, tag
		return rq, nil
	case *starlark.Dict:
		return requestDict(x)
	}
	return rq, fmt.Errorf("request returned %s, want a path (string), (path, tag) or a dict", v.Type())
}

// requestDict reads a generated request dict.
func requestDict(d *starlark.Dict) (h1wire.HTTPRequest, error) {
	var rq h1wire.HTTPRequest
	for _, kv := range d.Items() {
		k, _ := starlark.AsString(kv[0])
		var err error
		switch k {
		case "url", "tag", "method":
			s, ok := starlark.AsString(kv[1])
			if !ok {
				return rq, fmt.Errorf("request returned %s = %s, want a string", k, kv[1].Type())
			}
			switch k {
			case "url":
				rq.URL = s
			case "tag":
				rq.Tag = s
			default:
				rq.Method = s
			}
		case "body":
			rq.Body, err = bodyBytes("request", kv[1])
		case "headers":
			h, ok := kv[1].(*starlark.Dict)
			if !ok {
				return rq, fmt.Errorf("request returned headers = %s, want a dict", kv[1].Type())
			}
			rq.Headers, err = headerPairs("request", h)
		default:
			return rq, fmt.Errorf("request returned a dict with %s: it takes url, method, body, headers and tag", kv[0])
		}
		if err != nil {
			return rq, err
		}
	}
	return rq, nil
}
