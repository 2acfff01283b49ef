package workload

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/workload/mongotest"
)

// startMongo starts FerretDB for t and fills db.kv with n documents
// {_id: i, k: i, v: 0}; it returns the server's URI with db in its path.
func startMongo(t *testing.T, n int) string {
	t.Helper()
	uri := mongotest.Start(t) + "bench"
	ctx := context.Background()
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	docs := make([]any, n)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "k", Value: i}, {Key: "v", Value: 0}}
	}
	if _, err := c.Database("bench").Collection("kv").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	return uri
}

// mongoDoc reads one document of bench.kv.
func mongoDoc(t *testing.T, uri string, filter bson.D) bson.M {
	t.Helper()
	ctx := context.Background()
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	var m bson.M
	if err := c.Database("bench").Collection("kv").FindOne(ctx, filter).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMongo(t *testing.T) {
	t.Parallel()
	uri := startMongo(t, 100) // FerretDB decodes every document per find: keep it small
	g := mustExec(t, `
r = workload.mongo(uri, op = "find", collection = "kv", request = {"filter": {"k": 5}}, clients = 2, duration = "1s", warmup = "200ms")
assert.eq(r.kind, "mongo")
assert.eq(r.label, "find bench.kv")
assert.eq(r.errors, {})
assert.true(r.count > 0, r.count)
assert.eq(r.docs_per_req, 1.0)
assert.eq(r.intended, r.count)
l = workload.mongo(uri, op = "find", collection = "kv", request = lambda seq: {"filter": {"k": {"$lt": seq % 3 + 1}}}, rate = 100, duration = "1s", warmup = 0)
assert.eq(l.errors, {})
assert.eq(l.intended, 100)
assert.true(l.count > 50, l.count)
assert.true(l.docs_per_req > 1.5 and l.docs_per_req < 2.5, l.docs_per_req)
g = workload.mongo(uri, op = "find", collection = "kv", request = gen, clients = 1, duration = "300ms", warmup = 0)
assert.eq(g.errors, {})
assert.eq(g.docs_per_req, 1.0)
a = workload.mongo(uri, op = "aggregate", collection = "kv", request = {"pipeline": [{"$match": {"k": {"$lt": 10}}}]}, clients = 1, duration = "300ms", warmup = 0)
assert.eq(a.errors, {})
assert.eq(a.docs_per_req, 10.0)
# One client: FerretDB over SQLite loses concurrent $inc updates (46 of 100 at rate 100).
u = workload.mongo(uri, op = "update", collection = "kv", request = {"filter": {"k": 7}, "update": {"$inc": {"v": 1}}}, clients = 1, duration = "500ms", warmup = 0)
assert.eq(u.errors, {})
assert.eq(u.docs_per_req, 1.0)
i = workload.mongo(uri, op = "insert", collection = "ins", request = {"document": {"x": 1}}, clients = 2, duration = "300ms", warmup = 0)
assert.eq(i.errors, {})
b = workload.mongo(uri, op = "bulk", collection = "kv", db = "bench",
                   request = {"writes": [{"update": {"filter": {"k": 8}, "update": {"$inc": {"v": 1}}}}, {"update": {"filter": {"k": 9}, "update": {"$inc": {"v": 2}}}}]},
                   clients = 1, duration = "300ms", warmup = 0)
assert.eq(b.errors, {})
assert.eq(b.docs_per_req, 2.0)
d = workload.mongo(uri, op = "insert", collection = "kv", request = {"document": {"_id": 1}}, clients = 1, duration = "200ms", warmup = 0)
assert.eq(d.count, 0)
assert.true(d.errors["mongo 11000"] > 0, d.errors)
assert.fails(lambda: workload.mongo(uri, op = "delete", collection = "kv", clients = 1, duration = "1s"), 'op must be one of find, insert')
assert.fails(lambda: workload.mongo(uri, op = "find", collection = "kv", request = {"filtre": {}}, clients = 1, duration = "1s"), 'find takes filter, projection, sort, limit, not "filtre"')
assert.fails(lambda: workload.mongo(uri, op = "update", collection = "kv", request = {"filter": {}}, clients = 1, duration = "1s"), 'update needs update')
assert.fails(lambda: workload.mongo(42, op = "find", collection = "kv", clients = 1, duration = "1s"), 'target must be a mongodb:// URI')
assert.fails(lambda: workload.mongo(uri.rsplit("/", 1)[0] + "/", op = "find", collection = "kv", clients = 1, duration = "1s"), 'db is required')
`, starlark.StringDict{"uri": str(uri),
		"gen": goFunc{func(i int64) map[string]any { return map[string]any{"filter": map[string]any{"k": i % 100}} }}})
	updates := g["u"].(*Run).d.Count
	if v, ok := mongoDoc(t, uri, bson.D{{Key: "k", Value: 7}})["v"].(int32); !ok || v != int32(updates) {
		t.Errorf("the update ran %v times, the run counted %d", v, updates)
	}
}

// stallProxy forwards to addr until after has passed since its first
// connection, then holds every byte (the server looks hung).
func stallProxy(t *testing.T, addr string, after time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var once sync.Once
	var stallAt time.Time
	var mu sync.Mutex
	stalled := func() bool { mu.Lock(); defer mu.Unlock(); return time.Now().After(stallAt) }
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			once.Do(func() { mu.Lock(); stallAt = time.Now().Add(after); mu.Unlock() })
			go proxyConn(c, addr, stalled)
		}
	}()
	return ln.Addr().String()
}

func proxyConn(c net.Conn, addr string, stalled func() bool) {
	defer c.Close()
	s, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer s.Close()
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			for stalled() {
				time.Sleep(50 * time.Millisecond)
				if _, err := dst.Write(nil); err != nil {
					return
				}
			}
			if n > 0 {
				if _, err := dst.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	go pipe(s, c)
	pipe(c, s)
	io.Copy(io.Discard, c)
}

// The twin of TestOpenLoopConservation and TestInterruptConservation for
// Mongo: a server that hangs mid-run, and Ctrl-C mid-run, still account for
// every intended request.
func TestMongoConservation(t *testing.T) {
	t.Parallel()
	uri := startMongo(t, 10)
	host := strings.TrimPrefix(strings.TrimSuffix(uri, "/bench"), "mongodb://")
	stall := "mongodb://" + stallProxy(t, host, time.Second) + "/bench?directConnection=true"
	g := mustExec(t, `r = workload.mongo(uri, op = "find", collection = "kv", rate = 100, duration = "2s", timeout = "300ms", max_inflight = 4, warmup = 0)`,
		starlark.StringDict{"uri": str(stall)})
	r := g["r"].(*Run)
	checkConservation(t, "mongo stall", r, 200)
	if r.d.Dropped == 0 && r.d.Errors["timeout"] == 0 {
		t.Errorf("mongo stall: neither drops nor timeouts: %v", r.d.Errors)
	}
	for _, loop := range []string{"rate = 50, max_inflight = 8", "clients = 4"} {
		stall := "mongodb://" + stallProxy(t, host, 700*time.Millisecond) + "/bench?directConnection=true"
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(1200*time.Millisecond, cancel)
		start := time.Now()
		g, err := execStar(t, ctx, `r = workload.mongo(uri, op = "find", collection = "kv", `+loop+`, duration = "10s", warmup = "200ms", timeout = "5s")`,
			starlark.StringDict{"uri": str(stall)})
		if err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el > 4*time.Second {
			t.Errorf("%s: Ctrl-C took %s to end the run", loop, el)
		}
		r := g["r"].(*Run)
		if !r.d.Interrupted || r.d.Undecided == 0 {
			t.Errorf("%s: interrupted %v, undecided %d", loop, r.d.Interrupted, r.d.Undecided)
		}
		checkConservation(t, "mongo "+loop, r, -1)
	}
}

// The twin of the DSN redaction: a password in the URI reaches no label,
// error, record or warning.
func TestMongoRedactsURI(t *testing.T) {
	t.Parallel()
	const pw = "Mg7sEcretPw"
	bad := "mongodb://bench:" + pw + "@127.0.0.1:1/bench?serverSelectionTimeoutMS=200&connectTimeoutMS=200"
	_, err := execStar(t, context.Background(), `workload.mongo(uri, op = "find", collection = "kv", clients = 1, duration = "1s", timeout = "100ms")`,
		starlark.StringDict{"uri": str(bad)})
	if err == nil || strings.Contains(err.Error(), pw) || !strings.Contains(err.Error(), "workload.mongo") {
		t.Errorf("the error names the builtin and hides the password: %v", err)
	}
	uri := startMongo(t, 10)
	withPw := strings.Replace(uri, "mongodb://", "mongodb://bench:"+pw+"@", 1) + "?authMechanism=PLAIN"
	g, err := execStar(t, context.Background(), `r = workload.mongo(uri, op = "find", collection = "kv", clients = 1, duration = "300ms", warmup = 0, label = uri)`,
		starlark.StringDict{"uri": str(withPw)})
	if err != nil {
		if strings.Contains(err.Error(), pw) {
			t.Fatalf("the error shows the password: %v", err)
		}
		t.Skipf("FerretDB refused the credentials (%v): the record part of the check needs a server that takes them", err)
	}
	r := g["r"].(*Run)
	data, _ := r.MarshalValue()
	for what, s := range map[string]string{"label": r.d.Label, "string": r.String(), "html": r.HTML(), "markdown": r.Markdown(),
		"stored": string(data), "json": fmt.Sprint(r.JSON())} {
		if strings.Contains(s, pw) {
			t.Errorf("%s shows the password: %s", what, s)
		}
	}
	if !strings.Contains(r.d.Label, "bench:xxxxx@") {
		t.Errorf("label %q: want the user kept and the password masked", r.d.Label)
	}
}
