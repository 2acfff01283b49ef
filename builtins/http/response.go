package http

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	nethttp "net/http"
	"slices"
	"strings"

	starjsonlib "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/runtime/codec"
)

// Response is one HTTP answer: a Starlark value of type "response".
type Response struct {
	r responseData
}

// responseData is what a response holds, and how the cache stores it.
type responseData struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"` // as given, a password hidden
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"` // canonical names, repeated values joined by ", "
	Body    string            `json:"body"`
}

var (
	_ starlark.HasAttrs   = (*Response)(nil)
	_ starlark.Comparable = (*Response)(nil)
	_ codec.Marshaler     = (*Response)(nil)
)

func newResponse(method, url string, resp *nethttp.Response, body []byte) *Response {
	h := map[string]string{}
	for k, vs := range resp.Header {
		h[nethttp.CanonicalHeaderKey(k)] = strings.Join(vs, ", ")
	}
	return &Response{responseData{Method: method, URL: url, Status: resp.StatusCode, Headers: h, Body: string(body)}}
}

// volatile are the headers two answers to one request may differ in
// without differing as answers: when it was given, over which connection,
// by which build of the server.
var volatile = []string{"Age", "Connection", "Date", "Keep-Alive", "Server", "Server-Timing", "Transfer-Encoding", "X-Request-Id"}

// compared are the headers equality compares: all but the volatile ones.
func (r *Response) compared() map[string]string {
	out := map[string]string{}
	for k, v := range r.r.Headers {
		if !slices.Contains(volatile, k) {
			out[k] = v
		}
	}
	return out
}

func (r *Response) digest() string {
	sum := sha256.Sum256([]byte(r.r.Body))
	return hex.EncodeToString(sum[:6])
}

// String shows the status, the body's size and digest (so two bodies alike
// in their first bytes still print apart) and its start.
func (r *Response) String() string {
	start := r.r.Body
	if len(start) > 60 {
		start = start[:57] + "..."
	}
	return fmt.Sprintf("response(%d, %d bytes, sha256 %s: %q)", r.r.Status, len(r.r.Body), r.digest(), start)
}

func (r *Response) Type() string         { return "response" }
func (r *Response) Freeze()              {}
func (r *Response) Truth() starlark.Bool { return true }

// Hash agrees with ==: status, body and the compared headers.
func (r *Response) Hash() (uint32, error) {
	h := fnv.New32a()
	fmt.Fprintf(h, "%d\x00%s", r.r.Status, r.r.Body)
	return h.Sum32(), nil
}

func (r *Response) AttrNames() []string {
	return []string{"body", "headers", "json", "method", "status", "url"}
}

func (r *Response) Attr(name string) (starlark.Value, error) {
	switch name {
	case "status":
		return starlark.MakeInt(r.r.Status), nil
	case "body":
		return starlark.String(r.r.Body), nil
	case "url":
		return starlark.String(r.r.URL), nil
	case "method":
		return starlark.String(r.r.Method), nil
	case "headers":
		d := starlark.NewDict(len(r.r.Headers))
		keys := make([]string, 0, len(r.r.Headers))
		for k := range r.r.Headers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			_ = d.SetKey(starlark.String(k), starlark.String(r.r.Headers[k]))
		}
		d.Freeze()
		return d, nil
	case "json":
		return starlark.NewBuiltin("response.json", func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
				return nil, err
			}
			v, err := starlark.Call(th, starjsonlib.Module.Members["decode"], starlark.Tuple{starlark.String(r.r.Body)}, nil)
			if err != nil {
				return nil, fmt.Errorf("response.json: the body of %s %s is not JSON: %v", r.r.Method, r.r.URL, err)
			}
			return v, nil
		}), nil
	}
	return nil, nil
}

// CompareSameType: two responses are equal as answers (see volatile).
func (r *Response) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	o := y.(*Response)
	eq := r.r.Status == o.r.Status && r.r.Body == o.r.Body && mapsEqual(r.compared(), o.compared())
	switch op {
	case syntax.EQL:
		return eq, nil
	case syntax.NEQ:
		return !eq, nil
	}
	return false, fmt.Errorf("responses support only == and !=")
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Difference says where two responses differ as answers: the status, a
// header, or the body's first differing byte, with both sides around it.
func (r *Response) Difference(y starlark.Value) string {
	o, ok := y.(*Response)
	if !ok {
		return fmt.Sprintf("a = %s, b = %s", r, y)
	}
	if r.r.Status != o.r.Status {
		return fmt.Sprintf("status: a = %d, b = %d", r.r.Status, o.r.Status)
	}
	a, b := r.compared(), o.compared()
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if a[k] != b[k] {
			return fmt.Sprintf("header %s: a = %q, b = %q", k, a[k], b[k])
		}
	}
	i := 0
	for i < len(r.r.Body) && i < len(o.r.Body) && r.r.Body[i] == o.r.Body[i] {
		i++
	}
	around := func(s string) string {
		from, to := max(i-20, 0), min(i+40, len(s))
		return fmt.Sprintf("%q", s[from:to])
	}
	return fmt.Sprintf("body at byte %d (of %d and %d): a = %s, b = %s", i, len(r.r.Body), len(o.r.Body), around(r.r.Body), around(o.r.Body))
}

// JSON is the response's data, for a record's JSON.
func (r *Response) JSON() any { return r.r }

func (r *Response) MarshalValue() ([]byte, error) { return json.Marshal(r.r) }

func decodeResponse(b []byte, _ codec.Types) (starlark.Value, error) {
	var d responseData
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("response: %w", err)
	}
	return &Response{d}, nil
}
