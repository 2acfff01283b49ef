package workload

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/hostinfo"
	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// TestConcurrentScenarios: workload.concurrent runs reads at N clients
// beside writes at R/s in one window; the server's count by path is each
// scenario's, .all holds them all, and the group stores and reads back.
func TestConcurrentScenarios(t *testing.T) {
	oracle, srv := newByPath()
	defer srv.Close()
	g := mustExec(t, `
s = workload.concurrent({
    "reads": lambda: workload.http(url + "/r", clients = 2),
    "writes": lambda: workload.http(url + "/w", method = "POST", body = "x", rate = 300, label = "the writes"),
    "mixed": lambda: workload.http(url, requests = [{"url": "/m1", "tag": "one"}, {"url": "/m2", "tag": "two"}], rate = 100),
}, duration = "600ms", warmup = 0, window = "200ms")
assert.eq(list(s.keys()), ["reads", "writes", "mixed"])
assert.eq(len(s), 3)
reads, writes, all = s["reads"], s["writes"], s.all
assert.eq(all.kind, "concurrent")
assert.eq(reads.label, "reads")
assert.eq(writes.label, "the writes")
assert.eq(reads.tag, "reads")
assert.eq(all.label, "reads + writes + mixed")
assert.eq(all.count, reads.count + writes.count + s["mixed"].count)
assert.eq(all.intended, reads.intended + writes.intended + s["mixed"].intended)
assert.eq(all.by_tag["reads"], reads)
assert.eq(sorted(all.by_tag.keys()), ["mixed", "reads", "writes"])
assert.eq(reads.duration, writes.duration)
assert.eq(all.duration, reads.duration)
assert.eq(len(all.windows), 3)
assert.eq(sorted(s["mixed"].by_tag.keys()), ["one", "two"])
assert.true(writes.count > 150 and reads.count > 0)
assert.eq([k for k, v in s.items()], list(s.keys()))
`, starlark.StringDict{"url": str(srv.URL)})
	s := g["s"].(*Scenarios)
	served := oracle.take()
	for name, path := range map[string]string{"reads": "GET /r", "writes": "POST /w"} {
		if got := s.all.tags[name].d.Intended; got != served[path] {
			t.Errorf("scenario %s holds %d requests, the server saw %d", name, got, served[path])
		}
	}
	if m := s.all.tags["mixed"]; m.tags["one"].d.Intended != served["GET /m1"] || m.tags["two"].d.Intended != served["GET /m2"] {
		t.Errorf("the mixed scenario's tags hold %d and %d, the server saw %v", m.tags["one"].d.Intended, m.tags["two"].d.Intended, served)
	}
	if md := s.Markdown(); !strings.Contains(md, "| reads | ") || !strings.Contains(md, "| writes | ") {
		t.Errorf("the record has no row per scenario:\n%s", md)
	}
	data, err := codec.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := codec.Decode(data, testModule().Decoders)
	if err != nil {
		t.Fatal(err)
	}
	if eq, err := starlark.Equal(s, back); err != nil || !eq {
		t.Errorf("the stored group differs from the one measured (%v)", err)
	}
	if b := back.(*Scenarios); b.all.tags["mixed"].tags["one"].d.Count != s.all.tags["mixed"].tags["one"].d.Count {
		t.Error("the stored group lost a scenario's tags")
	}
}

// TestConcurrentReadsBesideWrites: SQL writes at a rate beside HTTP reads
// at N clients, against a real PostgreSQL; pg_stat_statements' calls are
// the oracle of the writes.
func TestConcurrentReadsBesideWrites(t *testing.T) {
	dsn := startPostgres(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS hits (id int PRIMARY KEY, n int NOT NULL);
		INSERT INTO hits SELECT g, 0 FROM generate_series(1, 50) g ON CONFLICT DO NOTHING;
		UPDATE hits SET n = 0`); err != nil {
		t.Fatal(err)
	}
	_, srv := newByPath()
	defer srv.Close()
	g := mustExec(t, `
s = workload.concurrent({
    "reads": lambda: workload.http(url + "/r", clients = 2),
    "writes": lambda: workload.sql(dsn, query = "UPDATE hits SET n = n + 1 WHERE id = $1", args = lambda seq: [seq % 50 + 1], rate = 200),
}, duration = "700ms", warmup = "200ms")
assert.eq(s["writes"].errors, {})
assert.true(s["writes"].count > 100)
assert.true(s["reads"].count > 0)
assert.eq(s["writes"].by_statement["UPDATE"].count, s["writes"].count)
`, starlark.StringDict{"url": str(srv.URL), "dsn": str(dsn)})
	s := g["s"].(*Scenarios)
	var total int64
	if err := conn.QueryRow(ctx, "SELECT sum(n) FROM hits").Scan(&total); err != nil {
		t.Fatal(err)
	}
	w := s.all.tags["writes"].d
	// The table counts every update, the warm-up's too: at least the
	// window's, at most the window's and 200 ms at 200/s more.
	if total < w.Count || total > w.Count+45 {
		t.Errorf("the table took %d updates, the run counted %d in its window (+ <= 40 in warm-up)", total, w.Count)
	}
}

// TestConcurrentArgumentErrors: a mistake names the builtin and the
// scenario.
func TestConcurrentArgumentErrors(t *testing.T) {
	_, srv := newByPath()
	defer srv.Close()
	mustExec(t, `
c = workload.concurrent
h = lambda **kw: workload.http(url, clients = 1, **kw)
assert.fails(lambda: c({}), "workload.concurrent: scenarios is empty")
assert.fails(lambda: c({"a": 3}, duration = "1s"), 'scenario "a" must be a function that calls a workload')
assert.fails(lambda: c({"a": lambda: None}, duration = "1s"), 'scenario "a" ran no workload')
assert.fails(lambda: c({"a": lambda: [h(), h()]}, duration = "1s"), 'scenario "a" calls a second workload')
assert.fails(lambda: c({"a": lambda: h()}), "duration is required \\(here, or the same in every scenario\\)")
assert.fails(lambda: c({"a": lambda: h(duration = "1s"), "b": lambda: h(duration = "2s")}), 'scenario "b" gives duration = 2s, scenario "a" 1s')
assert.fails(lambda: c({"a": lambda: h(warmup = "2s")}, duration = "1s", warmup = "1s"), 'scenario "a" gives warmup = 2s, workload.concurrent 1s')
assert.fails(lambda: c({"a": lambda: h(warmup = "auto")}, duration = "1s"), 'warmup = "auto" in scenario "a"')
assert.fails(lambda: c({"a": lambda: workload.http(url, rate = 0)}, duration = "1s"), 'scenario "a": .*rate must be > 0')
assert.fails(lambda: c({"a[1]": lambda: h()}, duration = "1s"), "scenario names must be non-empty strings without")
assert.fails(lambda: c({"a": lambda: c({"b": lambda: h()}, duration = "1s")}, duration = "1s"), "a scenario cannot itself run workload.concurrent")
`, starlark.StringDict{"url": str(srv.URL)})
}

// TestConcurrentInterrupt: Ctrl-C mid-group keeps every scenario's figures.
func TestConcurrentInterrupt(t *testing.T) {
	_, srv := newByPath()
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(700*time.Millisecond, cancel)
	g, err := execStar(t, ctx, `
s = workload.concurrent({"a": lambda: workload.http(url + "/a", clients = 2), "b": lambda: workload.http(url + "/b", rate = 200)},
                        duration = "20s", warmup = "200ms")
`, starlark.StringDict{"url": str(srv.URL)})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	s := g["s"].(*Scenarios)
	for _, n := range []string{"a", "b"} {
		r := s.all.tags[n]
		if !r.d.Interrupted || r.d.Count == 0 || accounted(r) != r.d.Intended {
			t.Errorf("%s: interrupted %v, count %d, %d accounted of %d intended", n, r.d.Interrupted, r.d.Count, accounted(r), r.d.Intended)
		}
	}
	if !s.all.d.Interrupted || s.all.d.Count != s.all.tags["a"].d.Count+s.all.tags["b"].d.Count {
		t.Errorf("the merged run: interrupted %v, count %d", s.all.d.Interrupted, s.all.d.Count)
	}
}

// TestConcurrentWithAFleet: a scenario on two local agents (each a real
// process) starts with this process's scenario at one instant, and the
// server counts each scenario's requests and the agents' mix's tags as the
// runs do. The windows are one (the same instant and duration on every
// part; TestConcurrentScenariosShareOneWindow checks 10 ms in one
// process); what the server sees of three processes on a 2-core box at
// load 11-13 is a scheduling later: first requests 0.3-28 ms apart (each
// agent dials as its first requests fall due), last ones 5-20 ms apart
// (measured over 7 runs), so the bounds here are 40 and 30 ms.
func TestConcurrentWithAFleet(t *testing.T) {
	timing.Only(t, "the scenarios' windows are compared to 10 ms")
	// At load >= cores a late edge is tried again, up to 3 times; the
	// counts are checked every time.
	for attempt := 1; ; attempt++ {
		late := fleetWindows(t)
		load, _ := hostinfo.LoadAvg()
		if len(late) == 0 || attempt == 3 || load[0] < float64(goruntime.NumCPU()) {
			for _, e := range late {
				t.Error(e)
			}
			return
		}
		t.Logf("attempt %d at load %.1f on %d cores: %q; again", attempt, load[0], goruntime.NumCPU(), late)
	}
}

// fleetWindows runs the fleet's scenario beside this process's once,
// checks the counts, and returns how the scenarios' edges missed their
// bounds.
func fleetWindows(t *testing.T) (late []string) {
	log := newArrivals()
	srv := httptest.NewServer(log)
	defer srv.Close()
	g := mustExec(t, `
s = workload.concurrent({
    "here": lambda: workload.http(url + "/here", clients = 2),
    "agents": lambda: workload.http(url, requests = [{"url": "/a1", "tag": "one", "weight": 3}, {"url": "/a2", "tag": "two"}],
                                    rate = 400, agents = workload.agents(local = 2)),
}, duration = "1s", warmup = 0)
assert.eq(len(s["agents"].agents), 2)
assert.eq(s["agents"].by_tag["one"].intended + s["agents"].by_tag["two"].intended, s["agents"].intended)
assert.eq(s["agents"].by_tag["one"].share, 0.75)
`, starlark.StringDict{"url": str(srv.URL)})
	s := g["s"].(*Scenarios)
	log.mu.Lock()
	defer log.mu.Unlock()
	here, agents := s.all.tags["here"], s.all.tags["agents"]
	if here.d.Intended != log.n["/here"] || agents.tags["one"].d.Intended != log.n["/a1"] || agents.tags["two"].d.Intended != log.n["/a2"] {
		t.Errorf("here %d, agents' one %d and two %d; the server saw %v", here.d.Intended, agents.tags["one"].d.Intended, agents.tags["two"].d.Intended, log.n)
	}
	first := func(ps ...string) time.Time {
		var f time.Time
		for _, p := range ps {
			if f.IsZero() || log.first[p].Before(f) {
				f = log.first[p]
			}
		}
		return f
	}
	last := func(ps ...string) time.Time {
		var l time.Time
		for _, p := range ps {
			if log.last[p].After(l) {
				l = log.last[p]
			}
		}
		return l
	}
	t.Logf("here %s..%s, agents %s..%s; agents %+v", first("/here").Format("05.000000"), last("/here").Format("05.000000"),
		first("/a1", "/a2").Format("05.000000"), last("/a1", "/a2").Format("05.000000"), agents.d.Agents)
	if d := first("/here").Sub(first("/a1", "/a2")).Abs(); d > 40*time.Millisecond {
		late = append(late, fmt.Sprintf("the scenarios began %s apart", d))
	}
	if d := last("/here").Sub(last("/a1", "/a2")).Abs(); d > 30*time.Millisecond {
		late = append(late, fmt.Sprintf("the scenarios ended %s apart", d))
	}
	return late
}

// arrivals notes, by path, how many requests came and the first and last.
type arrivals struct {
	mu          sync.Mutex
	n           map[string]int64
	first, last map[string]time.Time
}

func newArrivals() *arrivals {
	return &arrivals{n: map[string]int64{}, first: map[string]time.Time{}, last: map[string]time.Time{}}
}

func (a *arrivals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	p := r.URL.Path
	a.n[p]++
	if a.first[p].IsZero() {
		a.first[p] = now
	}
	a.last[p] = now
}
