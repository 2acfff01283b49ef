package demo

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/child"
	"github.com/benchbook/benchbook/builtins/internal/demotarget"
	"github.com/benchbook/benchbook/builtins/workload"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// TestMain plays the benchbook binary's part: "__demo" runs the server,
// "__supervise" the supervisor of the children.
func TestMain(m *testing.M) {
	child.RunMode(child.Supervisor, demotarget.Mode)
	os.Exit(m.Run())
}

// testModules are what the tests' code sees beside demo: workload, which
// drives the demo.
func testModules() []runtime.Module { return []runtime.Module{workload.Module(workload.Options{})} }

func run(t *testing.T, src string) starlark.StringDict {
	t.Helper()
	return startest.MustExec(t, startest.Options{
		Print:   func(_ *starlark.Thread, msg string) { t.Log(msg) },
		Modules: testModules(),
		Globals: starlark.StringDict{"demo": Builtin},
	}, src)
}

func TestDemoServesSearchAndStops(t *testing.T) {
	g := run(t, `
d = demo(index = True, rows = 20000)
assert.true(d.url.startswith("http://127.0.0.1:"))
assert.true(d.pid > 0)
assert.true(d.rss() > 0)
assert.true(d.cpu() >= 0)
`)
	h := g["d"].(*Handle)
	resp, err := http.Get(h.url + "/search?q=" + demotarget.Token(42) + "&limit=5")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Count(string(body), `"id"`) != 5 || !strings.Contains(string(body), demotarget.Token(42)) {
		t.Fatalf("search: %d %s", resp.StatusCode, body)
	}
	get := func(method, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, h.url+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// Writes: likes count in memory, read back with the item.
	for range 3 {
		if code, body := get("POST", "/items/17/like"); code != 200 {
			t.Fatalf("like: %d %s", code, body)
		}
	}
	if code, body := get("GET", "/items/17"); code != 200 || !strings.Contains(body, `"likes":3`) || !strings.Contains(body, `"id":17`) {
		t.Errorf("item after 3 likes: %d %s", code, body)
	}
	if code, _ := get("GET", "/items/999999"); code != 404 {
		t.Errorf("a missing item: %d, want 404", code)
	}
	if code, _ := get("POST", "/items/999999/like"); code != 404 {
		t.Errorf("liking a missing item: %d, want 404", code)
	}
	for _, m := range []string{"GET /items/x", "POST /items/1e3/like"} {
		method, path, _ := strings.Cut(m, " ")
		if code, _ := get(method, path); code != 400 {
			t.Errorf("%s: %d, want 400", m, code)
		}
	}
	h.kill()
	if _, err := http.Get(h.url + "/healthz"); err == nil {
		t.Error("demo still answers after stop")
	}
}

// The option must make a difference a short run sees clearly.
func TestIndexIsMeasurable(t *testing.T) {
	if testing.Short() {
		t.Skip("two 2 s load runs")
	}
	timing.Only(t, "the demo target re-executes this test binary, so under -race its SQLite (modernc, Go code) runs several times slower and a table scan outlasts a short timing test")
	start := time.Now()
	g := run(t, `
def gen(i):
    return "/search?limit=20&q=t" + ("000" + str(i % 2000))[-4:]
def one(index):
    d = demo(index = index)
    r = workload.http(d.url, request = gen, clients = 8, duration = "2s", warmup = "300ms", observe = [d])
    d.stop()
    return r
slow = one(False)
fast = one(True)
assert.eq(slow.errors, {})
assert.eq(fast.errors, {})
assert.true(fast.rps > 3 * slow.rps)
assert.true(slow.server_cpu_us_per_req > 2 * fast.server_cpu_us_per_req)
`)
	t.Logf("no index: %v; index: %v (%s)", g["slow"], g["fast"], time.Since(start))
}
