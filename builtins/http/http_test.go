package http

import (
	"encoding/json"
	"io"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/metric"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// arm is a target to check: /item/N answers {"id": N} (arm B's /item/7
// answers 8: a wrong answer), with a Date and Server of its own; POST /echo
// echoes the body and its Content-Type.
func arm(name string, wrongSeven bool) *httptest.Server {
	return httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Server", "arm "+name)
		w.Header().Set("Date", time.Now().Add(time.Duration(len(name))*time.Hour).UTC().Format(nethttp.TimeFormat))
		switch {
		case r.URL.Path == "/echo":
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, r.Method+" "+r.Header.Get("Content-Type")+" "+r.Header.Get("X-Trace")+" "+string(b))
		case r.URL.Path == "/missing":
			nethttp.NotFound(w, r)
		default:
			id, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/item/"))
			if wrongSeven && id == 7 {
				id = 8
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]int{"id": id})
		}
	}))
}

func modules() []runtime.Module { return []runtime.Module{Module(), metric.Module()} }

// TestResponsesCompareAsAnswers: two arms' answers to the same requests
// are equivalent though their Date and Server differ; a wrong answer is a
// mismatch naming where the bodies part; statuses, headers, JSON and
// posted bodies read as sent; a response stores and reads back equal.
func TestResponsesCompareAsAnswers(t *testing.T) {
	a, b, bad := arm("a", false), arm("bb", false), arm("bad", true)
	defer a.Close()
	defer b.Close()
	defer bad.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close()
	g := startest.MustExec(t, startest.Options{Modules: modules(), Globals: starlark.StringDict{
		"a": starlark.String(a.URL), "b": starlark.String(b.URL), "bad": starlark.String(bad.URL), "refused": starlark.String(refused)}}, `
ids = [1, 2, 7, 40]
ra = {i: http.get(a + "/item/%d" % i) for i in ids}
rb = {i: http.get(b + "/item/%d" % i) for i in ids}
e = equivalent(ra, rb)
assert.eq(e.ok, True)
assert.eq(e.distinct_a, 4)
assert.eq(ra[7] == rb[7], True)
assert.eq(ra[7] == ra[1], False)
assert.true(ra[7].headers["Date"] != rb[7].headers["Date"])
assert.eq(ra[7].status, 200)
assert.eq(ra[7].json(), {"id": 7})
assert.eq(ra[7].headers["Content-Type"], "application/json")
assert.eq(ra[7].method, "GET")
rbad = {i: http.get(bad + "/item/%d" % i) for i in ids}
assert.fails(lambda: equivalent(ra, rbad), 'the arms answer differently: 1 mismatches in 4 queries[^$]*\n  7: body at byte 6 \\(of 9 and 9\\): a = "{\\\\"id\\\\":7}\\\\n", b = "{\\\\"id\\\\":8}\\\\n"')
m = http.get(a + "/missing")
assert.eq(m.status, 404)
assert.fails(lambda: equivalent({"m": m}, {"m": ra[1]}), '"m": status: a = 404, b = 200')
p = http.post(a + "/echo", body = {"n": 1}, headers = {"X-Trace": "t1"})
assert.eq(p.body, 'POST application/json t1 {"n":1}')
p2 = http.post(a + "/echo", body = "raw", headers = {"Content-Type": "text/csv"})
assert.eq(p2.body, "POST text/csv  raw")
assert.fails(lambda: http.get(refused), "http.get: GET http://127.0.0.1:[0-9]+/: .*connection refused")
assert.fails(lambda: http.get("ftp://x/"), "http.get: url: malformed URL")
assert.fails(lambda: http.post(a, body = 3), "http.post: body must be a string, bytes, a dict or a list")
assert.fails(lambda: ra[1].json() if False else http.get(a + "/echo").json(), "response.json: the body of GET .* is not JSON")
`)
	r := g["ra"].(*starlark.Dict)
	v, _, _ := r.Get(starlark.MakeInt(7))
	data, err := codec.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := codec.Decode(data, Module().Decoders)
	if err != nil {
		t.Fatal(err)
	}
	if eq, err := starlark.Equal(v, back); err != nil || !eq {
		t.Errorf("a stored response differs: %v vs %v (%v)", v, back, err)
	}
}
