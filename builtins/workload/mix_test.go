package workload

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/codec"
)

// byPath is the oracle of the mix tests: a net/http server that counts
// every request by method and path, slower for POST, failing /fail.
type byPath struct {
	mu sync.Mutex
	n  map[string]int64
}

func newByPath() (*byPath, *httptest.Server) {
	b := &byPath{n: map[string]int64{}}
	return b, httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.n[r.Method+" "+r.URL.Path]++
		b.mu.Unlock()
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusTeapot)
		}
	}))
}

func (b *byPath) take() map[string]int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.n
	b.n = map[string]int64{}
	return n
}

// TestHTTPMix: workload.http(requests = [...]) counts every request in
// exactly the tag the server saw it as, in both loops; each tag is a whole
// run; the run stores and reads back whole.
func TestHTTPMix(t *testing.T) {
	oracle, srv := newByPath()
	defer srv.Close()
	for _, loop := range []string{`clients = 3`, `rate = 600`} {
		oracle.take()
		g := mustExec(t, `
mix = [
    {"url": "/items/1", "tag": "read", "weight": 6},
    {"url": lambda seq: "/items/%d" % (seq % 5 + 2), "tag": "read", "weight": 2},
    {"url": "/items", "method": "POST", "body": "{}", "headers": {"Content-Type": "application/json"}, "tag": "write", "weight": 2},
    {"url": "/fail", "weight": 1},
]
r = workload.http(url, requests = mix, seed = 42, `+loop+`, duration = "600ms", warmup = 0, window = "200ms")
assert.eq(sorted(r.by_tag.keys()), ["GET /fail", "read", "write"])
assert.eq(r.seed, 42)
read, write, fail = r.by_tag["read"], r.by_tag["write"], r.by_tag["GET /fail"]
assert.eq(read.tag, "read")
assert.eq(r.tag, "")
assert.eq(read.label, "read")
assert.eq(read.share, 8 / 11)
assert.eq(read.count + write.count, r.count)
assert.eq(read.intended + write.intended + fail.intended, r.intended)
assert.eq(fail.errors, {"status 418": fail.intended})
assert.eq(fail.count, 0)
assert.eq(read.errors, {})
assert.true(read.count > 0 and write.count > 0)
assert.eq(read.hist.count, read.count)
assert.true(0 < read.p(50) and read.p(50) <= read.p(99))
assert.eq(read.ok_p(99), read.p(99))
assert.eq(len(read.windows), 3)
assert.eq(sum([w.count for w in read.windows]), read.count)
assert.true(abs(read.rps - read.count / read.duration) < 0.001)
assert.eq(read.valid, r.valid)
assert.eq(r.by_tag.get("nope"), None)
assert.true("read" in r.by_tag)
assert.eq(len(r.by_tag), 3)
assert.fails(lambda: r.by_tag["nope"], 'key "nope" not in dict')
assert.eq(read.by_tag, {})
`, starlark.StringDict{"url": str(srv.URL), "sum": starlark.NewBuiltin("sum", sumBuiltin)})
		r := g["r"].(*Run)
		served := oracle.take()
		want := map[string]int64{"GET /fail": served["GET /fail"], "write": served["POST /items"]}
		for k, n := range served {
			if strings.HasPrefix(k, "GET /items/") {
				want["read"] += n
			}
		}
		for tag, n := range want {
			if got := r.tags[tag].d.Intended; got != n || n == 0 {
				t.Errorf("%s: tag %s holds %d requests, the server saw %d", loop, tag, got, n)
			}
		}
		if !strings.Contains(r.Markdown(), "| read | ") || !strings.Contains(r.HTML(), `<table class="run by-tag">`) {
			t.Errorf("%s: the record has no per-tag table:\n%s", loop, r.Markdown())
		}
		data, err := codec.Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := codec.Decode(data, testModule().Decoders)
		if err != nil {
			t.Fatal(err)
		}
		if eq, err := starlark.Equal(r, back); err != nil || !eq {
			t.Errorf("%s: the stored run differs from the one measured (%v)", loop, err)
		}
		if b := back.(*Run); b.tags["read"].d.Count != r.tags["read"].d.Count || b.tags["read"].d.Share != r.tags["read"].d.Share || b.d.Seed != 42 {
			t.Errorf("%s: the stored run's tags differ", loop)
		}
	}
}

func sumBuiltin(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var l *starlark.List
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &l); err != nil {
		return nil, err
	}
	var n int64
	for x := range starlark.Elements(l) {
		i, _ := starlark.AsInt32(x)
		n += int64(i)
	}
	return starlark.MakeInt64(n), nil
}

// TestHTTPTaggedGenerator: request = fn returning (path, tag) or a dict
// tags each request; one returning paths leaves the run untagged.
func TestHTTPTaggedGenerator(t *testing.T) {
	oracle, srv := newByPath()
	defer srv.Close()
	g := mustExec(t, `
def gen(seq):
    if seq % 4 == 0:
        return {"url": "/w", "method": "PUT", "body": "x", "tag": "write"}
    return ("/r", "read")
r = workload.http(url, request = gen, rate = 400, duration = "500ms", warmup = 0)
assert.eq(sorted(r.by_tag.keys()), ["read", "write"])
assert.eq(r.by_tag["write"].share, 0)
assert.eq(r.by_tag["read"].intended + r.by_tag["write"].intended, r.intended)
u = workload.http(url, request = lambda seq: "/plain", clients = 1, duration = "200ms", warmup = 0)
assert.eq(u.by_tag, {})
`, starlark.StringDict{"url": str(srv.URL)})
	r := g["r"].(*Run)
	served := oracle.take()
	if r.tags["write"].d.Intended != served["PUT /w"] || r.tags["read"].d.Intended != served["GET /r"] {
		t.Errorf("tags write %d, read %d; the server saw %v", r.tags["write"].d.Intended, r.tags["read"].d.Intended, served)
	}
	// 100 of the 200 requests are writes, one in four by the generator.
	if n := r.tags["write"].d.Intended; n != 50 {
		t.Errorf("write: %d requests, want 50 of 200", n)
	}
}

// TestMixArgumentErrors: a mistake in a mix names the builtin, the entry
// and what is wrong.
func TestMixArgumentErrors(t *testing.T) {
	mustExec(t, `
def run(**kw):
    return workload.http(clients = 1, duration = "1s", **kw)
assert.fails(lambda: run(requests = {"url": "/x"}), "workload.http: requests must be a list of dicts, got dict")
assert.fails(lambda: run(requests = []), "workload.http: requests is empty")
assert.fails(lambda: run(url = "http://127.0.0.1:1", requests = [{"url": "/x", "wieght": 2}]), "workload.http: requests\\[0\\]: unknown key \"wieght\" \\(an entry takes url, method, body, headers, tag, weight\\)")
assert.fails(lambda: run(url = "http://127.0.0.1:1", requests = [{"url": "/x"}, {"url": "/y", "weight": 0}]), "workload.http: requests\\[1\\]: weight must be a number > 0, got 0")
assert.fails(lambda: run(url = "http://127.0.0.1:1", requests = [{"url": "/x", "tag": ""}]), "requests\\[0\\]: tag must be a non-empty string")
assert.fails(lambda: run(url = "http://127.0.0.1:1", requests = [{"url": "/x", "tag": "a[1]"}]), "without \\[ or \\]")
assert.fails(lambda: run(requests = [{"method": "GET"}]), "workload.http: requests\\[0\\]: url is required")
assert.fails(lambda: run(url = "http://127.0.0.1:1", requests = [{"url": "http://127.0.0.2:1/x"}]), "requests\\[0\\]: url \"http://127.0.0.2:1/x\" is not on 127.0.0.1:1: one run sends to one host")
assert.fails(lambda: run(url = "http://127.0.0.1:1", requests = [{"url": "/x"}], request = lambda: "/y"), "give requests \\(a mix\\) or request \\(a generator\\), not both")
assert.fails(lambda: run(url = "http://127.0.0.1:1", seed = 3), "seed draws a mix's requests: give requests")
assert.fails(lambda: run(url = "http://127.0.0.1:1", requests = [{"url": "/x"}], seed = -1), "seed must be an int >= 0, got -1")
assert.fails(lambda: run(), "workload.http: url is required \\(or requests = \\[...\\], a mix\\)")
`, nil)
}

// TestMongoMix: workload.mongo(requests = [...]) draws finds and inserts
// by weight; the database is the oracle of the writes (each insert adds
// one document to bench.log, so its count is the inserts that ran; not
// $inc updates, which FerretDB applies read-modify-write and loses under
// concurrency), and a generator may name each request's tag.
func TestMongoMix(t *testing.T) {
	uri := startMongo(t, 20)
	g := mustExec(t, `
r = workload.mongo(uri, collection = "kv", requests = [
    {"op": "find", "request": lambda seq: {"filter": {"k": seq % 20}}, "tag": "read", "weight": 3},
    {"op": "insert", "collection": "log", "request": lambda seq: {"document": {"seq": seq}}, "tag": "write"},
], clients = 2, duration = "600ms", warmup = 0)
assert.eq(sorted(r.by_tag.keys()), ["read", "write"])
assert.eq(r.by_tag["read"].errors, {})
assert.eq(r.by_tag["write"].share, 0.25)
assert.eq(r.by_tag["read"].intended + r.by_tag["write"].intended, r.intended)
g = workload.mongo(uri, op = "find", collection = "kv", request = lambda seq: {"filter": {"k": seq % 20}, "tag": "even" if seq % 2 == 0 else "odd"},
                   rate = 100, duration = "400ms", warmup = 0)
assert.eq(sorted(g.by_tag.keys()), ["even", "odd"])
assert.eq(g.by_tag["even"].intended, 20)
assert.fails(lambda: workload.mongo(uri, collection = "kv", requests = [{"op": "nope"}], clients = 1, duration = "1s"), "workload.mongo: requests\\[0\\]: op must be one of")
`, starlark.StringDict{"uri": str(uri)})
	r := g["r"].(*Run)
	ctx := context.Background()
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	n, err := c.Database("bench").Collection("log").CountDocuments(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	if w := r.tags["write"].d; w.Count != n || n == 0 {
		t.Errorf("bench.log holds %d documents, the write tag counts %d inserts", n, w.Count)
	}
}

// TestSQLMix: workload.sql(requests = [...]) in both loops; the table is
// the oracle (each kind adds one to its own row, so each row holds its
// tag's successes), and the shares follow the weights.
func TestSQLMix(t *testing.T) {
	dsn := startPostgres(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE kinds (k text PRIMARY KEY, n int NOT NULL); INSERT INTO kinds VALUES ('a', 0), ('b', 0)`); err != nil {
		t.Fatal(err)
	}
	for _, loop := range []string{"clients = 3", "rate = 400"} {
		if _, err := conn.Exec(ctx, `UPDATE kinds SET n = 0`); err != nil {
			t.Fatal(err)
		}
		g := mustExec(t, `
r = workload.sql(dsn, requests = [
    {"sql": "UPDATE kinds SET n = n + 1 WHERE k = 'a'", "tag": "a", "weight": 3},
    {"sql": ["SELECT 1", "UPDATE kinds SET n = n + $1 WHERE k = 'b'"], "args": [1], "tag": "b"},
], `+loop+`, duration = "600ms", warmup = 0)
assert.eq(r.errors, {})
assert.eq(sorted(r.by_tag.keys()), ["a", "b"])
assert.eq(r.by_tag["a"].share, 0.75)
assert.eq(r.by_tag["a"].count + r.by_tag["b"].count, r.count)
`, starlark.StringDict{"dsn": str(dsn)})
		r := g["r"].(*Run)
		rows, err := conn.Query(ctx, `SELECT k, n FROM kinds`)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for rows.Next() {
			var k string
			var n int64
			if err := rows.Scan(&k, &n); err != nil {
				t.Fatal(err)
			}
			got[k] = n
		}
		rows.Close()
		for _, tag := range []string{"a", "b"} {
			if c := r.tags[tag].d.Count; c != got[tag] || c == 0 {
				t.Errorf("%s: tag %s counts %d successes, its row took %d", loop, tag, c, got[tag])
			}
		}
	}
}
