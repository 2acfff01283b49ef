package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
)

// Fleet is a set of agents a workload runs on: a "fleet" value made by
//
//	workload.agents(local = N, cpus = ["0", "1"])
//	workload.agents(ssh = ["user@host", ...], ssh_command = ["ssh", ...], binary = None)
//	workload.agents(kubernetes = {"image": ..., "replicas": N, "namespace": ...,
//	                "cpu": "1", "memory": "512Mi", "node_selector": {...},
//	                "start_after": "60s"})
//
// with hang = "10s" (an agent silent this long is hung) and
// allow_clock_offset = False on each. workload.http(..., agents = fleet)
// and workload.sql(..., agents = fleet) split clients or rate across it
// and return one merged run with a per-agent table.
type Fleet struct {
	c fleetConfig
}

// fleetConfig is a fleet's whole description, stored as JSON: a fleet is a
// plain value, so the cell that makes it caches and its hash keys the runs.
type fleetConfig struct {
	Kind       string            `json:"kind"` // local, ssh, kubernetes
	N          int               `json:"n"`
	CPUs       []string          `json:"cpus,omitempty"`
	Hosts      []string          `json:"hosts,omitempty"`
	SSHCommand []string          `json:"ssh_command,omitempty"`
	Kube       map[string]string `json:"kubernetes,omitempty"`
	Selector   map[string]string `json:"node_selector,omitempty"`
	Binary     string            `json:"binary,omitempty"` // local and ssh: the benchbook agents run (default this one)
	Hang       time.Duration     `json:"hang"`
	AllowClock bool              `json:"allow_clock_offset,omitempty"`
}

var (
	_ starlark.HasAttrs = (*Fleet)(nil)
	_ codec.Marshaler   = (*Fleet)(nil)
)

func init() {
	Module.Members["agents"] = starlark.NewBuiltin("workload.agents", agentsBuiltin)
	codec.Register("fleet", func(b []byte) (starlark.Value, error) {
		f := &Fleet{}
		if err := json.Unmarshal(b, &f.c); err != nil {
			return nil, fmt.Errorf("fleet: %w", err)
		}
		return f, nil
	})
}

func (f *Fleet) String() string {
	return fmt.Sprintf("fleet(%s, %d agents)", f.c.Kind, f.c.N)
}
func (f *Fleet) Type() string                  { return "fleet" }
func (f *Fleet) Freeze()                       {}
func (f *Fleet) Truth() starlark.Bool          { return true }
func (f *Fleet) Hash() (uint32, error)         { return 0, fmt.Errorf("unhashable: fleet") }
func (f *Fleet) MarshalValue() ([]byte, error) { return json.Marshal(f.c) }
func (f *Fleet) AttrNames() []string           { return []string{"kind", "size"} }
func (f *Fleet) Attr(n string) (starlark.Value, error) {
	switch n {
	case "kind":
		return starlark.String(f.c.Kind), nil
	case "size":
		return starlark.MakeInt(f.c.N), nil
	}
	return nil, nil
}

func agentsBuiltin(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var local starlark.Value = starlark.None
	var ssh, cpus, sshCmd *starlark.List
	var kube *starlark.Dict
	hang := starval.PositiveDuration(10 * time.Second)
	c := fleetConfig{}
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "local?", &local, "ssh?", &ssh, "kubernetes?", &kube,
		"cpus?", &cpus, "ssh_command?", &sshCmd, "binary?", &c.Binary, "hang?", &hang, "allow_clock_offset?", &c.AllowClock); err != nil {
		return nil, err
	}
	c.Hang = time.Duration(hang)
	given := btoi(local != starlark.None) + btoi(ssh != nil) + btoi(kube != nil)
	if given != 1 {
		return nil, fmt.Errorf("%s: give one of local = N, ssh = [hosts] or kubernetes = {...}", b.Name())
	}
	var err error
	switch {
	case local != starlark.None:
		err = c.local(b.Name(), local, cpus)
	case ssh != nil:
		c.Kind = "ssh"
		if c.Hosts, err = strings_(b.Name(), "ssh", ssh); err == nil {
			c.N = len(c.Hosts)
			c.SSHCommand, err = strings_(b.Name(), "ssh_command", sshCmd)
		}
	default:
		err = c.kubernetes(b.Name(), kube)
	}
	if err != nil {
		return nil, err
	}
	if c.N < 1 {
		return nil, fmt.Errorf("%s: a fleet needs at least one agent", b.Name())
	}
	return &Fleet{c: c}, nil
}

func (c *fleetConfig) local(name string, n starlark.Value, cpus *starlark.List) error {
	c.Kind = "local"
	k, err := starlark.AsInt32(n)
	if err != nil || k < 1 || k > 256 {
		return fmt.Errorf("%s: local must be an int in 1..256, got %s", name, n)
	}
	c.N = k
	if c.CPUs, err = strings_(name, "cpus", cpus); err != nil {
		return err
	}
	for _, s := range c.CPUs {
		if _, err := fleet.ParseCPUs(s); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// kubeKeys are the keys kubernetes = {...} takes.
var kubeKeys = map[string]bool{"image": true, "replicas": true, "namespace": true, "cpu": true, "memory": true,
	"node_selector": true, "start_after": true}

func (c *fleetConfig) kubernetes(name string, d *starlark.Dict) error {
	c.Kind, c.Kube = "kubernetes", map[string]string{}
	for _, kv := range d.Items() {
		k, _ := starlark.AsString(kv[0])
		if !kubeKeys[k] {
			return fmt.Errorf("%s: kubernetes: unknown key %s (want image, replicas, namespace, cpu, memory, node_selector, start_after)", name, kv[0])
		}
		switch v := kv[1].(type) {
		case *starlark.Dict:
			c.Selector = map[string]string{}
			for _, sel := range v.Items() {
				sk, ok1 := starlark.AsString(sel[0])
				sv, ok2 := starlark.AsString(sel[1])
				if !ok1 || !ok2 {
					return fmt.Errorf("%s: kubernetes: node_selector wants strings, got %s: %s", name, sel[0], sel[1])
				}
				c.Selector[sk] = sv
			}
		case starlark.Int:
			n, err := starlark.AsInt32(v)
			if err != nil || n < 1 || k != "replicas" {
				return fmt.Errorf("%s: kubernetes: %s = %s", name, k, v)
			}
			c.N = n
		case starlark.String:
			c.Kube[k] = string(v)
		default:
			return fmt.Errorf("%s: kubernetes: %s must be a string, got %s", name, k, kv[1].Type())
		}
	}
	if c.Kube["image"] == "" {
		return fmt.Errorf("%s: kubernetes: image is required (an image built from builtins/workload/fleet/kube/deploy/Dockerfile)", name)
	}
	return nil
}

func strings_(name, arg string, l *starlark.List) ([]string, error) {
	if l == nil {
		return nil, nil
	}
	var out []string
	for i := range l.Len() {
		s, ok := starlark.AsString(l.Index(i))
		if !ok || s == "" {
			return nil, fmt.Errorf("%s: %s[%d] must be a non-empty string, got %s", name, arg, i, l.Index(i))
		}
		out = append(out, s)
	}
	return out, nil
}

// KubernetesLauncher makes the launcher of a kubernetes fleet. It is set
// only in a benchbook built with -tags kubernetes: client-go adds 36 MB to
// the binary and 20 MB to every command's memory, and SSH fleets copy the
// binary to every host.
var KubernetesLauncher func(opts map[string]string, selector map[string]string, run time.Duration) (fleet.Launcher, error)

func (c *fleetConfig) launcher(run time.Duration) (fleet.Launcher, error) {
	switch c.Kind {
	case "local":
		return &fleet.Local{CPUs: c.CPUs, Binary: c.Binary}, nil
	case "ssh":
		return &fleet.SSH{Hosts: c.Hosts, Command: c.SSHCommand, Binary: c.Binary}, nil
	}
	if KubernetesLauncher == nil {
		return nil, fmt.Errorf("this benchbook was built without Kubernetes support: go build -tags kubernetes ./cmd/benchbook")
	}
	return KubernetesLauncher(c.Kube, c.Selector, run)
}

// agentLoad is what an agent of an http or sql fleet runs (fleet.Spec.Load).
type agentLoad struct {
	Spec loadgen.Spec      `json:"spec"`
	HTTP *loadgen.HTTPSpec `json:"http,omitempty"`
	SQL  *agentSQL         `json:"sql,omitempty"`
}

// agentSQL is loadgen.SQLSpec's plain part, with static args.
type agentSQL struct {
	DSN        string              `json:"dsn"`
	Statements []loadgen.Statement `json:"statements"`
	Args       json.RawMessage     `json:"args,omitempty"` // static args; decodeArgs reads them
}

// runOnFleet runs spec's load on f's agents and merges their runs.
func runOnFleet(th *starlark.Thread, name, kind string, spec loadgen.Spec, load agentLoad, f *Fleet) (*Run, error) {
	specs, err := agentSpecs(kind, spec, load, f.c)
	if err != nil {
		return nil, fmt.Errorf("%s: agents: %w", name, err)
	}
	total := spec.Warmup + spec.Duration + spec.Timeout
	l, err := f.c.launcher(total)
	if err != nil {
		return nil, fmt.Errorf("%s: agents: %w", name, err)
	}
	ctx := runtime.Context(th)
	obs := &fleetObservers{spec: spec, done: make(chan struct{})}
	m, err := fleet.Run(ctx, l, specs, fleet.Options{Warmup: spec.Warmup, Duration: spec.Duration,
		Window: spec.Window, Timeout: spec.Timeout, Hang: f.c.Hang, AllowClockOffset: f.c.AllowClock, Progress: spec.Progress,
		OnStart: func(at time.Time) { obs.started = true; go obs.run(ctx, at) }})
	if err != nil {
		return nil, fmt.Errorf("%s: agents: %w", name, err)
	}
	return newFleetRun(kind, spec, m, obs), nil
}

// newFleetRun is the Run of a fleet: merged figures, observers' figures
// and trips, the agents' rows.
func newFleetRun(kind string, spec loadgen.Spec, m *fleet.Merged, obs *fleetObservers) *Run {
	res := mergedResult(m, spec)
	res.Observed = obs.figures(m.Count, res)
	var observed []guard.Trip
	if obs != nil {
		observed = obs.trips
	}
	fleetTrips(res, m.Trips, observed)
	r := newRun(kind, spec, res)
	r.d.Agents, r.d.Incomplete = agentRows(m.Rows), m.Incomplete
	return r
}

// agentSpecs divides the load: clients or rate (and the open loop's bound
// on requests in flight) across the agents, each with its own sequence range.
func agentSpecs(kind string, spec loadgen.Spec, load agentLoad, c fleetConfig) ([]fleet.Spec, error) {
	shares, err := fleet.Split(spec.Clients, spec.Rate, c.N)
	if err != nil {
		return nil, err
	}
	var out []fleet.Spec
	for i, sh := range shares {
		l := load
		l.Spec = spec
		l.Spec.Clients, l.Spec.Rate, l.Spec.SeqBase = sh.Clients, sh.Rate, sh.SeqBase
		if spec.MaxInflight > 0 {
			l.Spec.MaxInflight = int(math.Ceil(float64(spec.MaxInflight) / float64(c.N)))
		}
		b, err := json.Marshal(l)
		if err != nil {
			return nil, err
		}
		silence := max(3*c.Hang, 30*time.Second)
		out = append(out, fleet.Spec{Version: fleet.Version, Kind: kind, Load: b, Agent: i, Agents: c.N,
			SeqBase: sh.SeqBase, Silence: int64(silence)})
	}
	return out, nil
}

// mergedResult is a fleet's merged figures in the shape of one local run.
func mergedResult(m *fleet.Merged, spec loadgen.Spec) *loadgen.Result {
	res := &loadgen.Result{Hist: m.Hist, OK: m.OK, Service: m.Service, Errors: m.Errors, Intended: m.Intended,
		Count: m.Count, Late: m.Late, Tick: m.Tick, Dropped: m.Dropped, Undecided: m.Undecided, Interrupted: m.Interrupted,
		Measured: time.Duration(m.Duration * float64(time.Second)), CPU: time.Duration(m.CPU * float64(time.Second)),
		Warnings: m.Warnings}
	for i, w := range m.Windows {
		ws := loadgen.Window{Start: (spec.Window * time.Duration(i)).Seconds(), Count: w.OK, Errors: w.Errors}
		if w.Hist != nil {
			ws.P50, ws.P99 = loadgen.QuantileMs(w.Hist, 50), loadgen.QuantileMs(w.Hist, 99)
		}
		if length := min(spec.Window.Seconds(), spec.Duration.Seconds()-ws.Start); length > 0 {
			ws.RPS = float64(ws.Count) / length
		}
		res.Windows = append(res.Windows, ws)
	}
	return res
}

// agentRow is one agent in a fleet run's table.
type agentRow struct {
	Name      string  `json:"name"`
	Host      string  `json:"host"`
	Status    string  `json:"status"`
	Count     int64   `json:"count"`
	RPS       float64 `json:"rps"`
	P99       float64 `json:"p99"`            // ms
	CPUPerReq float64 `json:"cpu_us_per_req"` // µs
	CPUShare  float64 `json:"cpu_share"`      // of its CPUs, 0..1
	Late      int64   `json:"late"`
	Dropped   int64   `json:"dropped"`
	Saturated bool    `json:"saturated"`
	OffsetMs  float64 `json:"clock_offset_ms"`
	Measured  bool    `json:"clock_measured"`
}

func agentRows(rows []fleet.Row) []agentRow {
	var out []agentRow
	for _, r := range rows {
		out = append(out, agentRow{Name: r.Name, Host: r.Host, Status: r.Status, Count: r.Count, RPS: r.RPS, P99: r.P99,
			CPUPerReq: r.CPUPerReq, CPUShare: r.CPUShare, Late: r.Late, Dropped: r.Dropped, Saturated: r.Saturated,
			OffsetMs: float64(r.ClockOffset) / 1e6, Measured: r.ClockMeasured})
	}
	return out
}

// agentTable is the per-agent table's header and rows, as text.
func agentTable(rows []agentRow) (head []string, body [][]string) {
	head = []string{"agent", "host", "status", "ok", "req/s", "p99", "CPU/req", "CPU", "late", "dropped", "clock offset"}
	for _, r := range rows {
		cpu := fmt.Sprintf("%.0f%%", r.CPUShare*100)
		if r.Saturated {
			cpu += " saturated"
		}
		off := "not measured"
		if r.Measured {
			off = fmtOffset(r.OffsetMs)
		}
		body = append(body, []string{r.Name, r.Host, r.Status, fmt.Sprint(r.Count), fmt.Sprintf("%.1f", r.RPS),
			loadgen.FormatMs(r.P99), fmt.Sprintf("%.1f µs", r.CPUPerReq), cpu, fmt.Sprint(r.Late), fmt.Sprint(r.Dropped), off})
	}
	return head, body
}

// fmtOffset shows a clock offset in µs below a millisecond (never "-0").
func fmtOffset(ms float64) string {
	if math.Abs(ms) >= 1 {
		return fmt.Sprintf("%.2f ms", ms)
	}
	us := math.Round(ms * 1000)
	if us == 0 {
		us = 0 // -0 reads as a sign where there is none
	}
	return fmt.Sprintf("%.0f µs", us)
}

func agentsMarkdown(rows []agentRow) string {
	if len(rows) == 0 {
		return ""
	}
	head, body := agentTable(rows)
	var b strings.Builder
	b.WriteString("\n| " + strings.Join(head, " | ") + " |\n|" + strings.Repeat(" --- |", len(head)) + "\n")
	for _, row := range body {
		for i := range row {
			row[i] = strings.ReplaceAll(row[i], "|", `\|`)
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	return b.String()
}

func agentsHTML(rows []agentRow) string {
	if len(rows) == 0 {
		return ""
	}
	head, body := agentTable(rows)
	return htmlTable("agents", head, body)
}

func agentList(rows []agentRow) *starlark.List {
	l := make([]starlark.Value, len(rows))
	for i, r := range rows {
		l[i] = starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
			"name": starlark.String(r.Name), "host": starlark.String(r.Host), "status": starlark.String(r.Status),
			"count": starlark.MakeInt64(r.Count), "rps": starlark.Float(r.RPS), "p99": starlark.Float(r.P99),
			"cpu_us_per_req": starlark.Float(r.CPUPerReq), "cpu_share": starlark.Float(r.CPUShare),
			"late": starlark.MakeInt64(r.Late), "dropped": starlark.MakeInt64(r.Dropped),
			"saturated": starlark.Bool(r.Saturated), "clock_offset_ms": starlark.Float(r.OffsetMs),
		})
	}
	return starlark.NewList(l)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// onFleet runs workload.http on a fleet: the request must be the same for
// every agent (a generator runs in this process, out of the agents' reach).
func (h *httpArgs) onFleet(th *starlark.Thread, name string, spec loadgen.Spec, f *Fleet) (starlark.Value, error) {
	if h.request != starlark.None {
		return nil, fmt.Errorf("%s: request = a function cannot run on agents (it lives in this process): give url, headers and body", name)
	}
	hs := loadgen.HTTPSpec{URL: h.url, Method: h.method, Insecure: h.insecure}
	var err error
	if hs.Headers, err = headerPairs(name, h.headers); err != nil {
		return nil, err
	}
	if hs.Body, err = bodyBytes(name, h.body); err != nil {
		return nil, err
	}
	if _, err := loadgen.NewHTTPTarget(hs); err != nil { // refuse a bad URL here, not on every agent
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return runOnFleet(th, name, "http", spec, agentLoad{HTTP: &hs}, f)
}

// onFleet runs workload.sql on a fleet; args must be a static list.
func (s *sqlArgs) onFleet(th *starlark.Thread, name string, spec loadgen.Spec, f *Fleet) (starlark.Value, error) {
	sq := &agentSQL{}
	var err error
	if sq.DSN, err = dsnOf(name, s.db); err != nil {
		return nil, err
	}
	if sq.Statements, err = s.statements(name); err != nil {
		return nil, err
	}
	switch v := s.args.(type) {
	case starlark.NoneType:
	case *starlark.List, starlark.Tuple:
		vals, err := goValues(v.(starlark.Indexable))
		if err != nil {
			return nil, fmt.Errorf("%s: args: %w", name, err)
		}
		if sq.Args, err = json.Marshal(vals); err != nil {
			return nil, fmt.Errorf("%s: args: %w", name, err)
		}
	default:
		return nil, fmt.Errorf("%s: args = a function cannot run on agents (it lives in this process): give a list", name)
	}
	if err := runtime.TouchValue(th, s.db); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if spec.Label == "" {
		spec.Label = sq.Statements[0].SQL
	}
	return runOnFleet(th, name, "sql", spec, agentLoad{SQL: sq}, f)
}

// RunLocalFleet runs an HTTP load on n local agents (this executable's
// `agent` mode) without Starlark: the path agents = workload.agents(local
// = n) takes, for bench/fleet's overhead measurement.
func RunLocalFleet(ctx context.Context, n int, spec loadgen.Spec, hs loadgen.HTTPSpec) (*fleet.Merged, error) {
	c := fleetConfig{Kind: "local", N: n, Hang: 10 * time.Second}
	specs, err := agentSpecs("http", spec, agentLoad{HTTP: &hs}, c)
	if err != nil {
		return nil, err
	}
	return fleet.Run(ctx, &fleet.Local{}, specs, fleet.Options{Warmup: spec.Warmup, Duration: spec.Duration,
		Window: spec.Window, Timeout: spec.Timeout, Hang: c.Hang})
}

// fleetObservers sample the server around a fleet's measurement window, on
// this machine's clock, as a local run does around its own.
type fleetObservers struct {
	spec     loadgen.Spec
	done     chan struct{} // closed when run has stopped them
	started  bool          // set by OnStart, on the caller's goroutine
	totals   map[string]float64
	trips    []guard.Trip // the observed targets' run guards (a process died...)
	warnings []string
}

// run starts the observers when the window opens and stops them when it
// closes (or at Ctrl-C), asking each for its figures per one request: its
// totals, which figures divides by the merged count once it is known.
func (o *fleetObservers) run(ctx context.Context, at time.Time) {
	defer close(o.done)
	if len(o.spec.Observers) == 0 || !loadgen.SleepUntil(ctx, at.Add(o.spec.Warmup)) {
		return
	}
	w := loadgen.StartWatch(ctx, o.spec.Observers, time.Now(), false) // each agent guards its own host
	loadgen.SleepUntil(ctx, at.Add(o.spec.Warmup+o.spec.Duration))
	var warnings []string
	o.totals, o.trips, warnings = w.Stop(1)
	o.warnings = append(o.warnings, warnings...)
}

// figures are the observers' figures for count requests: every observer
// names a figure NAME_per_req for NAME / requests, so with one request it
// gave NAME, divided here.
func (o *fleetObservers) figures(count int64, res *loadgen.Result) map[string]float64 {
	if o == nil || !o.started {
		return nil
	}
	<-o.done
	res.Warnings = append(res.Warnings, o.warnings...)
	out := map[string]float64{}
	for k, v := range o.totals {
		if strings.HasSuffix(k, "_per_req") {
			if count == 0 {
				continue
			}
			v /= float64(count)
		}
		out[k] = v
	}
	return out
}

// fleetTrips gives a fleet run its run guards, as loadgen gives a local
// run its own: the agents' (a lost agent is a fatal one) and the observed
// targets'; the non-fatal ones become warnings, a fatal one makes the run
// invalid, so compare refuses it and abab runs it again.
func fleetTrips(res *loadgen.Result, agents, observed []guard.Trip) {
	res.Trips = append(append(res.Trips, agents...), observed...)
	guard.Sort(res.Trips)
	res.Warnings = append(res.Warnings, loadgen.TripWarnings(res.Trips)...)
}
