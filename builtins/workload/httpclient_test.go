package workload

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"go.starlark.net/starlark"
)

// The lean client must read every response shape a server may send and keep
// the connection in step: chunked, large, empty, closing, HTTP/1.0.
func TestHTTPResponseShapes(t *testing.T) {
	var bad atomic.Int64
	big := strings.Repeat("x", 100_000)
	mux := http.NewServeMux()
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "part one;")
		w.(http.Flusher).Flush()
		io.WriteString(w, "part two")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) })
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "bye")
	})
	mux.HandleFunc("/post", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != "POST" || string(body) != `{"a":1}` || r.Header.Get("X-Test") != "yes" {
			bad.Add(1)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mustExec(t, `
for path in ["/chunked", "/big", "/empty", "/close"]:
    r = workload.http(url + path, clients = 2, duration = "300ms", warmup = 0)
    assert.eq(r.errors, {})
    assert.true(r.count > 5, path)
p = workload.http(url + "/post", method = "POST", body = '{"a":1}', headers = {"X-Test": "yes"}, clients = 2, duration = "300ms", warmup = 0)
assert.eq(p.errors, {})
h = workload.http(url + "/big", method = "HEAD", clients = 1, duration = "200ms", warmup = 0)
assert.eq(h.errors, {})
n = workload.http(url + "/missing", clients = 1, duration = "200ms", warmup = 0)
assert.true(n.errors["status 404"] > 0)
`, starlark.StringDict{"url": str(srv.URL)})
	if bad.Load() != 0 {
		t.Errorf("%d POST requests arrived malformed", bad.Load())
	}
}

// TestHTTPS: https goes through the goroutine-per-client path (crypto/tls)
// in both loops; a self-signed certificate fails every request as "tls"
// unless insecure = True.
func TestHTTPS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	mustExec(t, `
for loop in [{"clients": 2}, {"rate": 100}]:
    r = workload.http(url, insecure = True, duration = "300ms", warmup = 0, **loop)
    assert.eq(r.errors, {})
    assert.true(r.count > 10)
    v = workload.http(url, duration = "200ms", warmup = 0, **loop)
    assert.eq(v.count, 0)
    assert.eq(list(v.errors.keys()), ["tls"])
`, starlark.StringDict{"url": str(srv.URL)})
}

// TestInterimResponse: a server answering Expect: 100-continue sends
// "100 Continue" before the response; both clients skip it, so every
// response is matched to its own request.
func TestInterimResponse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // makes net/http send 100 Continue first
		if r.URL.Query().Get("fail") != "" {
			w.WriteHeader(http.StatusTeapot)
		}
	}))
	defer srv.Close()
	mustExec(t, `
for loop in [{"clients": 2}, {"rate": 200}]:
    ok = workload.http(url + "/", method = "POST", body = "x", headers = {"Expect": "100-continue"}, duration = "300ms", warmup = 0, **loop)
    assert.eq(ok.errors, {})
    assert.true(ok.count > 10)
    bad = workload.http(url + "/?fail=1", method = "POST", body = "x", headers = {"Expect": "100-continue"}, duration = "300ms", warmup = 0, **loop)
    assert.eq(bad.count, 0)
    assert.eq(list(bad.errors.keys()), ["status 418"])
`, starlark.StringDict{"url": str(srv.URL)})
}
