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

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/h1wire"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/pgwire"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
)

// Fleet is a set of agents a workload runs on: a "fleet" value made by
//
//	workload.agents(local = N, cpus = ["0", "1"])
//	workload.agents(ssh = ["user@host", ...], ssh_command = ["ssh", ...], binary = None)
//	workload.agents(kubernetes = {"image": ..., "replicas": N, "namespace": ...,
//	                "cpu": "1", "memory": "512Mi", "node_selector": {...},
//	                "start_after": "60s", "host_network": False})
//
// with hang = "10s" (an agent silent this long is hung) and
// allow_clock_offset = False on each. workload.http(..., agents = fleet)
// and workload.sql(..., agents = fleet) split clients or rate across it
// and return one merged run with a per-agent table.
type Fleet struct {
	c    fleetConfig
	kube KubernetesLauncher // the module's (Options.Kubernetes); nil: none
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

// decodeFleet rebuilds stored fleets, which launch kubernetes agents with
// kube.
func decodeFleet(kube KubernetesLauncher) codec.DecodeFunc {
	return func(b []byte, _ codec.Types) (starlark.Value, error) {
		f := &Fleet{kube: kube}
		if err := json.Unmarshal(b, &f.c); err != nil {
			return nil, fmt.Errorf("fleet: %w", err)
		}
		return f, nil
	}
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

// agentsBuiltin is workload.agents, whose fleets launch kubernetes agents
// with kube.
func agentsBuiltin(kube KubernetesLauncher) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		f, err := newFleet(th, b, args, kwargs)
		if err != nil {
			return nil, err
		}
		f.kube = kube
		return f, nil
	}
}

// newFleet is a fleet of workload.agents' arguments.
func newFleet(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (*Fleet, error) {
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
	"node_selector": true, "start_after": true, "host_network": true}

func (c *fleetConfig) kubernetes(name string, d *starlark.Dict) error {
	c.Kind, c.Kube = "kubernetes", map[string]string{}
	for _, kv := range d.Items() {
		k, _ := starlark.AsString(kv[0])
		if !kubeKeys[k] {
			return fmt.Errorf("%s: kubernetes: unknown key %s (want image, replicas, namespace, cpu, memory, node_selector, start_after, host_network)", name, kv[0])
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
		case starlark.Bool:
			if k != "host_network" {
				return fmt.Errorf("%s: kubernetes: %s = %s", name, k, v)
			}
			if v { // the fleet's JSON, and so its hash, is that of before the key existed when False
				c.Kube[k] = "true"
			}
		case starlark.String:
			if k == "host_network" {
				return fmt.Errorf("%s: kubernetes: host_network must be a bool, got string", name)
			}
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

// launcher launches c's agents; kube makes a kubernetes fleet's launcher
// (Options.Kubernetes).
func (c *fleetConfig) launcher(run time.Duration, kube KubernetesLauncher) (fleet.Launcher, error) {
	switch c.Kind {
	case "local":
		return &fleet.Local{CPUs: c.CPUs, Binary: c.Binary}, nil
	case "ssh":
		return &fleet.SSH{Hosts: c.Hosts, Command: c.SSHCommand, Binary: c.Binary}, nil
	}
	if kube == nil {
		return nil, fmt.Errorf("this benchbook was built without Kubernetes support: go build -tags kubernetes ./cmd/benchbook")
	}
	return kube(c.Kube, c.Selector, run)
}

// fleetLoad is a load ready to run on a fleet's agents: what they run,
// and what the run records of its mix.
type fleetLoad struct {
	kind   string
	load   fleet.Load
	f      *Fleet
	shares map[string]float64 // a mix's tags' shares of the weights; nil without
	seed   uint64
}

// run runs spec's load on the agents: one merged run, with the agents'
// rows. startAt, when set, decides the start instant (a concurrent group's).
func (fl *fleetLoad) run(ctx context.Context, name string, spec loadgen.Spec, startAt func(time.Time, bool) (time.Time, error)) (*Run, error) {
	l, err := fl.f.c.launcher(spec.Warmup+spec.Duration+spec.Timeout, fl.f.kube)
	if err != nil {
		return nil, fmt.Errorf("%s: agents: %w", name, err)
	}
	load := fl.load
	load.Spec = spec
	m, err := fleet.RunLoad(ctx, l, fl.f.c.N, fl.kind, load,
		fleet.Options{Hang: fl.f.c.Hang, AllowClockOffset: fl.f.c.AllowClock, Progress: spec.Progress, StartAt: startAt})
	if err != nil {
		return nil, fmt.Errorf("%s: agents: %w", name, err)
	}
	run := fleetRun(fl.kind, spec, m)
	if fl.shares != nil {
		run.mixed(fl.seed, fl.shares)
	}
	return run, nil
}

// fleetRun is the Run of a fleet: its merged run, and the agents' rows.
func fleetRun(kind string, spec loadgen.Spec, m *fleet.Merged) *Run {
	r := newRun(kind, spec, m.Result)
	r.d.Agents, r.d.Incomplete = agentRows(m.Rows), m.Incomplete
	r.d.GenShare = genShare(kind, m.Result, r.d.Agents)
	return r
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
			"clock_measured": starlark.Bool(r.Measured),
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

// onFleet readies workload.http for a fleet: the request must be the same
// for every agent (a generator runs in this process, out of the agents'
// reach). A mix travels (its draw is the same on every agent, each from
// streams of its own); its entries' urls must be strings.
func (h *httpArgs) onFleet(th *starlark.Thread, name string, f *Fleet) (*fleetLoad, error) {
	hs, _, err := h.spec(name, th, false)
	if err != nil {
		return nil, err
	}
	tgt, err := h1wire.NewHTTPTarget(hs) // refuse a bad URL here, not on every agent
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &fleetLoad{kind: "http", load: fleet.Load{HTTP: &hs}, f: f, shares: tgt.Shares(), seed: h.seed.n}, nil
}

// onFleet readies workload.sql for a fleet; args must be static lists (a
// mix's entries' too). label is set when it is empty.
func (s *sqlArgs) onFleet(th *starlark.Thread, name string, f *Fleet, label *string) (*fleetLoad, error) {
	sq := &fleet.SQLLoad{Seed: s.seed.n}
	var err error
	if sq.DSN, err = dsnOf(name, s.db); err != nil {
		return nil, err
	}
	var ls pgwire.SQLSpec
	if _, err := s.script(name, th, &ls, false); err != nil {
		return nil, err
	}
	sq.Statements = ls.Statements
	if sq.Args, err = staticArgs(s.static); err != nil {
		return nil, fmt.Errorf("%s: args: %w", name, err)
	}
	for i, rq := range ls.Requests {
		r := fleet.SQLLoadRequest{Tag: rq.Tag, Weight: rq.Weight, Statements: rq.Statements}
		if r.Args, err = staticArgs(s.statics[i]); err != nil {
			return nil, fmt.Errorf("%s: requests[%d]: args: %w", name, i, err)
		}
		sq.Requests = append(sq.Requests, r)
	}
	shares, err := pgwire.SQLShares(ls) // refuse a bad mix here, not on every agent
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := runtime.TouchValue(th, s.db); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if *label == "" {
		if len(sq.Statements) > 0 {
			*label = sq.Statements[0].SQL
		} else {
			*label = "mix of " + fmt.Sprint(len(sq.Requests)) + " requests"
		}
	}
	return &fleetLoad{kind: "sql", load: fleet.Load{SQL: sq}, f: f, shares: shares, seed: s.seed.n}, nil
}

// staticArgs are args values as an agent receives them (JSON); nil for none.
func staticArgs(vals []any) (json.RawMessage, error) {
	if vals == nil {
		return nil, nil
	}
	return json.Marshal(vals)
}
