package mongo

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/workload"
	"github.com/benchbook/benchbook/builtins/workload/mongotest"
)

// The server's own count of find commands must match the requests the
// client counted: an oracle on the other side of the wire.
func TestMongoObserverAndMethods(t *testing.T) {
	uri := mongotest.Start(t) + "obs"
	g := mustRun(t, fmt.Sprintf(`
m = backend.mongo(%q, collections = ["kv"])
assert.eq(m.db, "obs")
assert.eq(m.insert("kv", [{"_id": i, "k": i, "tag": "t%%d" %% (i %% 5)} for i in range(200)]), 200)
assert.eq(m.count("kv"), 200)
assert.eq(m.count("kv", {"tag": "t1"}), 40)
assert.eq(m.find("kv", {"k": {"$lt": 3}}, sort = {"k": -1}), [{"_id": 2, "k": 2, "tag": "t2"}, {"_id": 1, "k": 1, "tag": "t1"}, {"_id": 0, "k": 0, "tag": "t0"}])
assert.eq(m.create_index("kv", {"k": 1}, name = "k_1"), "k_1")
assert.eq(m.stats("kv")["docs"], 200)
assert.eq(m.stats("kv")["indexes"], 2)
r = workload.mongo(m, op = "find", collection = "kv", request = {"filter": {"k": 5}}, clients = 2, duration = "1s", warmup = "200ms", observe = [m])
assert.eq(r.errors, {})
assert.true(abs(r.mongo_cmd_find - r.count) <= 3, (r.mongo_cmd_find, r.count))
# Per request, the same 3 finds of slack over the observers' count of
# requests, which they take as the window closes: up to the 2 clients'
# requests in flight then are in r.count and not in it (a loaded box gets
# few requests in 1 s: 51 finds over 46 requests of 48 is 1.109).
assert.true((r.count - 3.0) / r.count <= r.mongo_cmd_find_per_req and r.mongo_cmd_find_per_req <= (r.count + 3.0) / (r.count - 2), (r.mongo_cmd_find_per_req, r.count))
assert.true(r.mongo_cpu_us_per_req > 0, r.mongo_cpu_us_per_req)
assert.eq(r.mongo_coll_kv_docs, 200)
assert.eq(r.mongo_coll_kv_indexes, 2)
u = workload.mongo(m, op = "update", collection = "kv", request = {"filter": {"k": 5}, "update": {"$inc": {"n": 1}}}, clients = 1, duration = "300ms", warmup = 0, observe = [m])
# The server's first sample is taken while the run's first requests
# already go out (warmup = 0): the requests counted as it returned (2-3
# updates on FerretDB, more on a loaded box: 75 counted, 71 updates seen)
# are no part of its window, and the per-request figures divide by the
# requests counted after them. Those requests, against the server's count
# of updates: the one in flight as the window closes is the server's and
# not the client's, the ones done between the server's sample and the
# count taken after it are both's.
assert.true(u.mongo_cmd_update > 0 and u.count > 0, (u.mongo_cmd_update, u.count))
seen = int(u.mongo_cmd_update / u.mongo_cmd_update_per_req + 0.5)
assert.true(seen <= u.count and -2 <= u.mongo_cmd_update - seen and u.mongo_cmd_update - seen <= 5, (u.mongo_cmd_update, seen, u.count))
assert.fails(lambda: m.insert("kv", {"_id": 1}), "duplicate key")
assert.fails(lambda: backend.mongo(%q), "db is required")
assert.eq(backend.mongo(m.uri, track = False).count("kv"), 200)
m.drop_index("kv", "k_1")
assert.eq(m.stats("kv")["indexes"], 1)
m.drop("kv")
assert.eq(m.count("kv"), 0)
`, uri, strings.TrimSuffix(uri, "obs")))
	for _, name := range []string{"r", "u"} {
		if u := workload.Undocumented(g[name].(starlark.HasAttrs)); len(u) > 0 {
			t.Errorf("run attributes the table of run attributes (and the reference) does not list: %v", u)
		}
	}
}

// Fingerprints see the documents, not their order, field order or number
// types; one changed value changes them.
func TestMongoFingerprint(t *testing.T) {
	uri := mongotest.Start(t) + "fp"
	mustRun(t, fmt.Sprintf(`
m = backend.mongo(%q)
m.insert("a", [{"_id": i, "v": "v%%d" %% i, "n": i} for i in range(300)])
m.insert("b", [{"n": i * 1.0, "v": "v%%d" %% i, "_id": i} for i in reversed(range(300))])
m.insert("c", [{"_id": i, "v": "v%%d" %% i if i != 150 else "x", "n": i} for i in range(300)])
m.insert("d", [{"_id": i, "v": "v%%d" %% i, "n": i} for i in range(299)])
fp = m.fingerprint(["a", "b", "c", "d"])
assert.eq(fp["a"].docs, 300)
assert.eq(fp["a"], fp["b"])
assert.eq(fp["c"].docs, 300)
assert.ne(fp["a"].hash, fp["c"].hash)
assert.ne(fp["a"].hash, fp["d"].hash)
`, uri))
}

// The twin of TestGuardPostgres's crash: the server killed mid-run makes
// the Mongo run invalid, and its failed requests are accounted for.
func TestGuardMongoServerKilled(t *testing.T) {
	bin, err := mongotest.Binary()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	mustRun(t, fmt.Sprintf(`
srv = backend.process([%q, "-dir", %q, "-addr", "127.0.0.1:%d"], ready = "tcp:%d")
uri = "mongodb://127.0.0.1:%d/g"
ok = workload.mongo(uri, op = "find", collection = "kv", clients = 2, duration = "500ms", warmup = 0, observe = [srv])
assert.eq(ok.valid, True)
killer = backend.process(["sh", "-c", "sleep 1; kill -9 %%d; sleep 30" %% srv.pid])
r = workload.mongo(uri, op = "find", collection = "kv", clients = 2, duration = "3s", warmup = "0s", timeout = "300ms", observe = [srv])
killer.stop()
assert.eq(r.valid, False)
assert.eq([t.kind for t in r.trips if t.fatal], ["killed"])
errs = 0
for n in r.errors.values():
    errs += n
assert.true(errs > 0, r.errors)
assert.true("refused" in r.errors and "other" not in r.errors, r.errors)  # the dead server named as such
assert.eq(r.intended, r.count + errs + r.dropped + r.undecided)
`, bin, t.TempDir(), port, port, port))
}

// On a real MongoDB (BENCHBOOK_MONGO_URI; FerretDB has no queryExecutor
// metrics and no index effect over SQLite) the observers see what an index
// changes: a compound index examines about limit keys per search, the
// single-field one every key of the customer.
func TestMongoIndexEffectRealMongo(t *testing.T) {
	uri := mongotest.Real(t)
	mustRun(t, fmt.Sprintf(`
m = backend.mongo(%q, db = "benchbook_test_index")
m.drop("orders")
m.insert("orders", [{"_id": i, "customer": i %% 20, "created": i} for i in range(4000)])
m.create_index("orders", {"customer": 1}, name = "c")
def run():
    return workload.mongo(m, op = "find", collection = "orders", request = lambda seq: {"filter": {"customer": seq %% 20}, "sort": {"created": -1}, "limit": 10},
                          clients = 2, duration = "1s", warmup = "200ms", observe = [m])
a = run()
m.drop_index("orders", "c")
m.create_index("orders", {"customer": 1, "created": -1}, name = "cc")
b = run()
m.drop("orders")
assert.true(a.mongo_keys_examined_per_req > 150, a.mongo_keys_examined_per_req)
assert.true(b.mongo_keys_examined_per_req < 15, b.mongo_keys_examined_per_req)
assert.true(b.mongo_docs_examined_per_req < a.mongo_docs_examined_per_req)
`, uri))
}

// TestMongoStateSeesNumberTypes: the content hash that tracks a database's
// state tells int 7 from 7.0 (a change of the stored data), while the
// user's fingerprint, which compares answers, takes them as one number.
func TestMongoStateSeesNumberTypes(t *testing.T) {
	base := mongotest.Start(t)
	g := mustRun(t, fmt.Sprintf(`
mi = backend.mongo(%q)
mf = backend.mongo(%q)
mi.insert("c", [{"_id": 1, "n": 7}])
mf.insert("c", [{"_id": 1, "n": 7.0}])
assert.eq(mi.fingerprint(["c"])["c"].hash, mf.fingerprint(["c"])["c"].hash)
`, base+"types_int", base+"types_float"))
	ctx := context.Background()
	hi, err := g["mi"].(*Handle).contentHash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hf, err := g["mf"].(*Handle).contentHash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if hi == hf {
		t.Errorf("int 7 and 7.0 give one state hash %s", hi)
	}
}

// TestMongoReloadChecksItsDump: a reload that does not give back the
// database that was dumped (here: a manifest whose hash no longer matches,
// as when a client writes during the reload) is an error, not a restore.
func TestMongoReloadChecksItsDump(t *testing.T) {
	g := mustRun(t, fmt.Sprintf(`
m = backend.mongo(%q)
m.insert("c", [{"_id": i} for i in range(20)])
`, mongotest.Start(t)+"reloadcheck"))
	h, ctx, dir := g["m"].(*Handle), context.Background(), t.TempDir()
	if err := h.dump(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if err := h.reload(ctx, dir); err != nil {
		t.Fatalf("reload of an untouched dump: %v", err)
	}
	path := filepath.Join(dir, "manifest.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m dumpManifest
	if err := json.Unmarshal(data, &m); err != nil || m.Content == "" {
		t.Fatalf("manifest %s: %v", data, err)
	}
	m.Content = strings.Repeat("0", len(m.Content))
	data, _ = json.Marshal(m)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.reload(ctx, dir); err == nil || !strings.Contains(err.Error(), "differs from its dump") {
		t.Errorf("reload against another content hash: %v", err)
	}
}
