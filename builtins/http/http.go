// Package http is the notebook's `http` module: one request at a time, for
// what a load does not check, that two HTTP targets give the same answers
// (equivalent(a, b) compares responses) or that an endpoint answers at all.
// Load is workload.http's.
//
//	http.get(url, headers = {}, timeout = "10s") -> response
//	http.post(url, body = None, headers = {}, timeout = "10s") -> response
//	    url: http:// or https://; headers: {name: value}; body: a string,
//	    bytes, or a dict or list sent as JSON (Content-Type
//	    application/json unless headers name one).
//	response: .status (int), .headers (dict: canonical names, repeated
//	    values joined by ", "), .body (string), .json() (the body parsed),
//	    .url, .method. Responses compare (==, equivalent) by status, body and
//	    headers, but those that differ between two answers to one request
//	    (Date, Age, Connection, Keep-Alive, Transfer-Encoding, Server,
//	    Server-Timing, X-Request-Id): the answer, not the moment or the
//	    server build that gave it.
//
// A status of 400 or more is a response like any other; a request that gets
// none (refused, timed out, a malformed answer) is an error naming the
// builtin and the URL. A body past 16 MiB is refused, and redirects are
// followed (up to 10), as curl -L does.
package http

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	nethttp "net/http"
	"net/url"
	"strings"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/redact"
	"github.com/benchbook/benchbook/runtime/starjson"
)

// Module is the http module, and the decoder of the responses cells store.
func Module() runtime.Module {
	return runtime.Module{
		Name: "http",
		Globals: starlark.StringDict{"http": &starlarkstruct.Module{
			Name: "http",
			Members: starlark.StringDict{
				"get":  starlark.NewBuiltin("http.get", get),
				"post": starlark.NewBuiltin("http.post", post),
			},
		}},
		Decoders: codec.Types{"response": decodeResponse},
		Docs:     docs,
	}
}

// docs is the module's reference (benchbook help http).
//
//go:embed reference.md
var docs string

// maxBody bounds a response's body: an answer to check, not a download.
const maxBody = 16 << 20

// client goes to the target itself, as workload.http does: no proxy from
// the environment between them.
var client = func() *nethttp.Client {
	t := nethttp.DefaultTransport.(*nethttp.Transport).Clone()
	t.Proxy = nil
	return &nethttp.Client{Transport: t}
}()

func get(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var u string
	var headers *starlark.Dict
	timeout := starval.PositiveDuration(10 * time.Second)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "url", &u, "headers?", &headers, "timeout?", &timeout); err != nil {
		return nil, err
	}
	return do(th, b.Name(), "GET", u, headers, nil, time.Duration(timeout))
}

func post(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var u string
	var headers *starlark.Dict
	var body starlark.Value = starlark.None
	timeout := starval.PositiveDuration(10 * time.Second)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "url", &u, "body?", &body, "headers?", &headers, "timeout?", &timeout); err != nil {
		return nil, err
	}
	return do(th, b.Name(), "POST", u, headers, body, time.Duration(timeout))
}

// do sends one request and reads its whole answer.
func do(th *starlark.Thread, name, method, raw string, headers *starlark.Dict, body starlark.Value, timeout time.Duration) (starlark.Value, error) {
	shown := redact.String(raw)
	pu, err := url.Parse(raw)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return nil, fmt.Errorf("%s: url: malformed URL %q (want http://host[:port]/path)", name, shown)
	}
	payload, jsonBody, err := bodyOf(name, body)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(runtime.Context(th), timeout)
	defer cancel()
	req, err := nethttp.NewRequestWithContext(ctx, method, raw, strings.NewReader(string(payload)))
	if err != nil {
		return nil, fmt.Errorf("%s: %s", name, redact.String(err.Error()))
	}
	if body == nil || body == starlark.None {
		req.Body, req.ContentLength = nethttp.NoBody, 0
	}
	if err := setHeaders(name, req, headers); err != nil {
		return nil, err
	}
	if jsonBody && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s: %s %s: no answer within %s", name, method, shown, timeout)
		}
		return nil, fmt.Errorf("%s: %s %s: %s", name, method, shown, redact.String(err.Error()))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %s %s: reading the body: %s", name, method, shown, redact.String(err.Error()))
	}
	if len(data) > maxBody {
		return nil, fmt.Errorf("%s: %s %s: the body is larger than %d MiB: an answer to check, not a download", name, method, shown, maxBody>>20)
	}
	return newResponse(method, shown, resp, data), nil
}

// bodyOf reads post's body: a string or bytes as they are, a dict or list
// as JSON.
func bodyOf(name string, v starlark.Value) (data []byte, isJSON bool, err error) {
	switch x := v.(type) {
	case nil, starlark.NoneType:
		return nil, false, nil
	case starlark.String:
		return []byte(x), false, nil
	case starlark.Bytes:
		return []byte(x), false, nil
	case *starlark.Dict, *starlark.List, starlark.Tuple:
		j, err := starjson.Data(x)
		if err == nil {
			data, err = json.Marshal(j)
		}
		if err != nil {
			return nil, false, fmt.Errorf("%s: body: %w", name, err)
		}
		return data, true, nil
	}
	return nil, false, fmt.Errorf("%s: body must be a string, bytes, a dict or a list (sent as JSON), or None, got %s", name, v.Type())
}

func setHeaders(name string, req *nethttp.Request, headers *starlark.Dict) error {
	if headers == nil {
		return nil
	}
	for _, kv := range headers.Items() {
		k, ok1 := starlark.AsString(kv[0])
		v, ok2 := starlark.AsString(kv[1])
		if !ok1 || !ok2 || k == "" || strings.ContainsAny(k+v, "\r\n") {
			return fmt.Errorf("%s: headers: want string names and values without newlines, got %s: %s", name, kv[0], redact.String(kv[1].String()))
		}
		redact.Learn(k, v) // Authorization: Bearer T, however the dict was built
		if strings.EqualFold(k, "host") {
			req.Host = v
			continue
		}
		req.Header.Add(k, v)
	}
	return nil
}
