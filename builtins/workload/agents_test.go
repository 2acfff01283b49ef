package workload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/hidden"
	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/fleet/fleettest"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/h1wire"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// The test binary doubles as `benchbook agent`, so local fleets run the
// real generator in real processes.
func TestMain(m *testing.M) {
	hidden.Run() // the supervisor re-executes the test binary
	if len(os.Args) > 1 && os.Args[1] == "agent" {
		if err := fleet.Main(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr, fleet.AgentRun); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// teeLauncher keeps a copy of what each agent sent.
type teeLauncher struct {
	fleet.Launcher
	mu   sync.Mutex
	outs []*bytes.Buffer
}

func (l *teeLauncher) Launch(ctx context.Context, specs []fleet.Spec) ([]*fleet.Agent, error) {
	agents, err := l.Launcher.Launch(ctx, specs)
	for _, a := range agents {
		var b bytes.Buffer
		l.outs = append(l.outs, &b)
		a.Out = io.TeeReader(a.Out, &lockedBuf{mu: &l.mu, b: &b})
	}
	return agents, err
}

type lockedBuf struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// results are the agents' own result messages.
func (l *teeLauncher) results(t *testing.T) []*fleet.Report {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*fleet.Report
	for _, b := range l.outs {
		s := bufio.NewScanner(bytes.NewReader(b.Bytes()))
		s.Buffer(nil, 64<<20)
		for s.Scan() {
			var m fleet.Message
			if json.Unmarshal(s.Bytes(), &m) == nil && m.Type == "result" {
				out = append(out, m.Result)
			}
		}
	}
	return out
}

// A local fleet of 2 against a loopback target: the merged counts are the
// sums of the agents' and its percentiles those of one histogram into
// which every agent's recorded values were put one by one (no Merge).
func TestLocalFleetOfTwoIsLossless(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1)%50 == 0 {
			w.WriteHeader(503)
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	spec := loadgen.Spec{Clients: 4, Duration: time.Second, Warmup: 200 * time.Millisecond, Window: 500 * time.Millisecond, Timeout: 2 * time.Second}
	tl := &teeLauncher{Launcher: &fleet.Local{}}
	m, err := fleet.RunLoad(context.Background(), tl, 2, "http", fleet.Load{Spec: spec, HTTP: &h1wire.HTTPSpec{URL: srv.URL + "/x"}}, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := fleetRun("http", spec, m)
	results := tl.results(t)
	if len(results) != 2 || m.Incomplete {
		t.Fatalf("%d results, incomplete %v, rows %+v", len(results), m.Incomplete, m.Rows)
	}
	one := loadgen.NewHist()
	var count, intended, errs int64
	for _, rep := range results {
		res := rep.Run
		for _, bar := range res.Hist.Distribution() {
			if bar.Count > 0 {
				_ = one.RecordValues(bar.From, bar.Count)
			}
		}
		count, intended, errs = count+res.Count, intended+res.Intended, errs+sumErrors(res.Errors)
		if res.Count == 0 {
			t.Fatalf("an agent sent nothing: %+v", res)
		}
	}
	if r.d.Count != count || r.d.Intended != intended || sumErrors(r.d.Errors) != errs || errs == 0 {
		t.Fatalf("merged count/intended/errors %d/%d/%d, agents' sums %d/%d/%d", r.d.Count, r.d.Intended, sumErrors(r.d.Errors), count, intended, errs)
	}
	sameHist(t, r.d.Hist, one)
	if served.Load() < count+errs {
		t.Fatalf("the target served %d requests, fewer than the %d the run counts", served.Load(), count+errs)
	}
	var inWindows int64
	for _, w := range r.d.Windows {
		inWindows += w.Count
	}
	if inWindows != count || len(r.d.Windows) != 2 {
		t.Fatalf("windows hold %d successes in %d windows, run %d", inWindows, len(r.d.Windows), count)
	}
}

func sameHist(t *testing.T, got, want *hdrhistogram.Histogram) {
	t.Helper()
	if got.TotalCount() != want.TotalCount() {
		t.Fatalf("merged %d values, one histogram %d", got.TotalCount(), want.TotalCount())
	}
	for q := 0.0; q <= 100; q += 0.1 {
		if g, w := got.ValueAtQuantile(q), want.ValueAtQuantile(q); g != w {
			t.Fatalf("p%g: merged %d µs, one histogram %d µs", q, g, w)
		}
	}
}

// The Starlark surface: a fleet value, agents = fleet, and the per-agent
// table in the run; what agents cannot do is refused by name.
func TestAgentsInStarlark(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	g := mustExec(t, `
f = workload.agents(local = 2)
assert.eq(str(f), "fleet(local, 2 agents)")
r = workload.http(url, rate = 200, duration = "1s", warmup = "200ms", agents = f)
assert.eq(len(r.agents), 2)
assert.eq(r.incomplete, False)
assert.eq(r.agents[0].count + r.agents[1].count, r.count)
assert.true(all([a.status == "ok" for a in r.agents]))
assert.true(r.intended >= 190 and r.intended <= 210)
assert.eq(r.tick_ms, 0.0) # auto at 100/s per agent: each request at its intended start
t = workload.http(url, rate = 200, duration = "300ms", warmup = "0s", tick = "1ms", agents = f)
assert.eq(t.tick_ms, 1.0) # the agents' tick reaches the merged run
assert.fails(lambda: workload.http(url, clients = 1, duration = "1s", agents = f), "clients = 1 cannot be divided across 2 agents")
assert.fails(lambda: workload.http(url, clients = 2, duration = "1s", request = lambda: "/", agents = f), "cannot run on agents")
assert.fails(lambda: workload.agents(local = 2, ssh = ["h"]), "give one of")
assert.fails(lambda: workload.agents(kubernetes = {"replicas": 2}), "image is required")
assert.fails(lambda: workload.agents(kubernetes = {"image": "i", "replicas": 2, "host_network": "yes"}), "host_network must be a bool, got string")
assert.fails(lambda: workload.agents(kubernetes = {"image": "i", "replicas": True}), "replicas = True")
assert.fails(lambda: workload.http(url, clients = 2, duration = "1s", agents = workload.agents(kubernetes = {"image": "i", "replicas": 2})),
             "built without Kubernetes support: go build -tags kubernetes")
assert.fails(lambda: workload.agents(local = 2, cpus = ["x"]), "malformed CPU list")
`, starlark.StringDict{"url": str(srv.URL + "/")})
	r := g["r"].(*Run)
	if h := r.HTML(); !bytes.Contains([]byte(h), []byte(`<table class="agents">`)) || !bytes.Contains([]byte(h), []byte("local/1")) {
		t.Fatalf("no per-agent table in the HTML: %s", h)
	}
}

// TestKubernetesLauncherIsTheModules: a kubernetes fleet launches through
// the launcher its module was given (Options.Kubernetes), also when the
// fleet comes back from the cache; a module given none says how to build
// one that has it.
func TestKubernetesLauncherIsTheModules(t *testing.T) {
	var got []string
	kube := func(o, selector map[string]string, run time.Duration) (fleet.Launcher, error) {
		got = append(got, o["image"]+" "+selector["zone"]+" "+o["host_network"])
		return nil, errors.New("the test's launcher")
	}
	mod := Module(Options{Kubernetes: kube})
	url := str("http://127.0.0.1:1/")
	run := `assert.fails(lambda: workload.http(url, clients = 2, duration = "1s", agents = f), "agents: the test's launcher")`
	g := startest.MustExec(t, startest.Options{Modules: []runtime.Module{mod}, Globals: starlark.StringDict{"url": url}},
		`f = workload.agents(kubernetes = {"image": "img", "replicas": 2, "node_selector": {"zone": "z1"}, "host_network": True})`+"\n"+run)
	back, err := codec.Decode(mustEncode(t, g["f"]), mod.Decoders)
	if err != nil {
		t.Fatal(err)
	}
	startest.MustExec(t, startest.Options{Modules: []runtime.Module{mod}, Globals: starlark.StringDict{"url": url, "f": back}}, run)
	if len(got) != 2 || got[0] != "img z1 true" || got[1] != "img z1 true" {
		t.Errorf("the launcher was called for %q, want the fleet's image, selector and host network twice", got)
	}
	// The same fleet decoded by a module without a launcher cannot launch.
	if back, err = codec.Decode(mustEncode(t, g["f"]), testModule().Decoders); err != nil {
		t.Fatal(err)
	}
	_, err = execStar(t, t.Context(), `workload.http(url, clients = 2, duration = "1s", agents = f)`, starlark.StringDict{"url": url, "f": back})
	if err == nil || !strings.Contains(err.Error(), "built without Kubernetes support") {
		t.Errorf("without a launcher: %v", err)
	}
}

// hitObserver counts the requests the server saw while it observed:
// server_hits, and server_hits_per_req as every observer names a figure
// divided by the run's requests.
type hitObserver struct{ hits *atomic.Int64 }

func (h hitObserver) String() string        { return "hits" }
func (h hitObserver) Type() string          { return "hits" }
func (h hitObserver) Freeze()               {}
func (h hitObserver) Truth() starlark.Bool  { return true }
func (h hitObserver) Hash() (uint32, error) { return 0, nil }
func (h hitObserver) StartObserving(context.Context) (func(int64) (map[string]float64, error), error) {
	before := h.hits.Load()
	return func(n int64) (map[string]float64, error) {
		hits := float64(h.hits.Load() - before)
		figs := map[string]float64{"server_hits": hits}
		if n > 0 { // as every observer does: no figure per request without requests
			figs["server_hits_per_req"] = hits / float64(n)
		}
		return figs, nil
	}, nil
}

// countingServer answers "ok" and counts the requests it saw.
func countingServer(t *testing.T) (url string, hits *atomic.Int64) {
	hits = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/", hits
}

// Observers sample the server around the fleet's measurement window: the
// hits they see match the merged run's requests (warmup left out), and
// per-request figures divide by the merged count. The window is 2 s: the
// coordinator wakes to open it some tens of ms late at load 9, which cost
// a 1 s window 11 % of its requests.
func TestFleetObserversCoverTheWindow(t *testing.T) {
	url, hits := countingServer(t)
	g := mustExec(t, `
r = workload.http(url, rate = 400, duration = "2s", warmup = "500ms", observe = [obs], agents = workload.agents(local = 2))
assert.true(abs(r.server_hits_per_req - r.server_hits / r.count) < 1e-9)
`, starlark.StringDict{"url": str(url), "obs": hitObserver{hits}})
	r := g["r"].(*Run)
	seen, n := r.d.Observed["server_hits"], float64(r.d.Intended)
	if seen < 0.9*n || seen > 1.1*n {
		t.Fatalf("the observers saw %.0f requests during the window, the run intended %.0f (warmup 200 of %d in all)", seen, n, hits.Load())
	}
}

// An agent killed mid-run is named, the run keeps the other's data, and
// the run is invalid: compare refuses it, abab runs it again. It is killed
// 700 ms into the run: killed at a time after its launch, on a loaded box
// it died before the handshake and the run failed ("agent local/1:
// signal: killed"), which is another test.
func TestFleetRunWithALostAgentIsInvalid(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	spec := loadgen.Spec{Clients: 2, Duration: 2 * time.Second, Window: time.Second, Timeout: time.Second}
	tl := &teeLauncher{Launcher: &fleet.Local{}}
	kill := &killLauncher{Launcher: tl}
	o := fleet.Options{Hang: 5 * time.Second, OnStart: func(at time.Time) { kill.killAt(at.Add(700 * time.Millisecond)) }}
	m, err := fleet.RunLoad(context.Background(), kill, 2, "http", fleet.Load{Spec: spec, HTTP: &h1wire.HTTPSpec{URL: srv.URL + "/"}}, o)
	if err != nil {
		t.Fatal(err)
	}
	r := fleetRun("http", spec, m)
	if r.valid() || !r.d.Incomplete || r.d.Agents[1].Status != "died: signal: killed" || r.d.Agents[0].Status != "ok" {
		t.Fatalf("valid %v incomplete %v rows %+v", r.valid(), r.d.Incomplete, r.d.Agents)
	}
	if r.d.Count != r.d.Agents[0].Count || r.d.Count == 0 {
		t.Fatalf("run count %d, the surviving agent's %d", r.d.Count, r.d.Agents[0].Count)
	}
	// valid = False is what compare refuses and abab reruns (run guards).
	mustExec(t, `
assert.eq(r.valid, False)
assert.true("agent local/1 agent lost" in r.invalid_reason, r.invalid_reason)
assert.eq(r.incomplete, True)
`, starlark.StringDict{"r": r})
}

// killLauncher keeps its agents, so that agent 1 can be killed mid-run.
type killLauncher struct {
	fleet.Launcher
	agents []*fleet.Agent
}

func (k *killLauncher) Launch(ctx context.Context, specs []fleet.Spec) ([]*fleet.Agent, error) {
	agents, err := k.Launcher.Launch(ctx, specs)
	k.agents = agents
	return agents, err
}

// killAt kills agent 1 at t.
func (k *killLauncher) killAt(t time.Time) {
	if len(k.agents) > 1 {
		time.AfterFunc(time.Until(t), k.agents[1].Kill)
	}
}

// A fleet is a stored value (its cell caches), and a fleet run keeps its
// per-agent rows through the cache.
func TestFleetValuesStore(t *testing.T) {
	g := mustExec(t, `f = workload.agents(ssh = ["a@h1", "h2"], ssh_command = ["ssh", "-F", "x"], hang = "3s")`, nil)
	back, err := codec.Decode(mustEncode(t, g["f"]), testModule().Decoders)
	if err != nil {
		t.Fatal(err)
	}
	if f := back.(*Fleet); f.c.N != 2 || f.c.Hosts[1] != "h2" || f.c.Hang != 3*time.Second || f.c.SSHCommand[1] != "-F" {
		t.Fatalf("fleet after the codec: %+v", f.c)
	}
	r := &Run{d: runData{Result: &loadgen.Result{Hist: loadgen.NewHist()}, Kind: "http", Incomplete: true, Agents: []agentRow{{Name: "ssh/0/a@h1", Status: "ok", Count: 7}}}}
	back, err = codec.Decode(mustEncode(t, r), testModule().Decoders)
	if err != nil {
		t.Fatal(err)
	}
	if r2 := back.(*Run); !r2.d.Incomplete || len(r2.d.Agents) != 1 || r2.d.Agents[0].Count != 7 {
		t.Fatalf("run after the codec: %+v", r2.d)
	}
}

func mustEncode(t *testing.T, v starlark.Value) []byte {
	t.Helper()
	b, err := codec.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stored is v as the cache gives it back.
func stored(t *testing.T, v starlark.Value) starlark.Value {
	t.Helper()
	back, err := codec.Decode(mustEncode(t, v), testModule().Decoders)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// An SSH fleet of 2 running the real generator (this test binary, copied
// to the "remote" side by the launcher) against a loopback target through
// a private sshd: merged counts are the agents' sums.
func TestSSHFleetRealGenerator(t *testing.T) {
	t.Parallel()
	client, _ := fleettest.SSHD(t, "127.0.0.1", nil, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	spec := loadgen.Spec{Rate: 300, Arrival: "poisson", Duration: time.Second, Warmup: 200 * time.Millisecond, Window: 500 * time.Millisecond, Timeout: time.Second, MaxInflight: 16}
	tl := &teeLauncher{Launcher: &fleet.SSH{Hosts: []string{"root@127.0.0.1", "root@127.0.0.1"}, Command: client, Binary: os.Args[0], Dir: t.TempDir()}}
	m, err := fleet.RunLoad(context.Background(), tl, 2, "http", fleet.Load{Spec: spec, HTTP: &h1wire.HTTPSpec{URL: srv.URL + "/"}}, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := fleetRun("http", spec, m)
	results := tl.results(t)
	if len(results) != 2 || !r.valid() {
		t.Fatalf("%d results, valid %v, rows %+v", len(results), r.valid(), r.d.Agents)
	}
	var intended int64
	for i, res := range results {
		intended += res.Run.Intended
		if !res.ClockMeasured || r.d.Agents[i].Status != "ok" {
			t.Fatalf("agent %d: %+v", i, r.d.Agents[i])
		}
	}
	// Two Poisson schedules of 150/s over 1 s, each seeded by its own range.
	if r.d.Intended != intended || intended < 200 || intended > 400 {
		t.Fatalf("merged intended %d, agents' sum %d (about 300 expected)", r.d.Intended, intended)
	}
	if results[0].Run.Intended == results[1].Run.Intended {
		t.Logf("both agents drew %d arrivals: possible, but their Poisson seeds should differ", results[0].Run.Intended)
	}
}
