package gate

import (
	"math"
	"strings"
	"testing"
)

// TestCompareDirection: a change counts against the limit only in the bad
// direction, and the limit is inclusive (a change equal to it passes).
func TestCompareDirection(t *testing.T) {
	old := ByID([]Figure{
		{Cell: "c", Name: "rps", Metric: "rps", Better: "higher", After: 200, Estimator: "geomean"},
		{Cell: "c", Name: "p99", Metric: "p99_ms", Better: "lower", After: 10, Estimator: "geomean"},
	})
	cases := []struct {
		name       string
		better     string
		after      float64
		wantFailed bool
		wantChange float64
	}{
		{"rps", "higher", 180, true, -10}, // 10 % fewer requests: worse
		{"rps", "higher", 190, false, -5}, // exactly the limit: passes
		{"rps", "higher", 260, false, 30}, // better
		{"p99", "lower", 11, true, 10},    // 10 % slower: worse
		{"p99", "lower", 5, false, -50},   // better
	}
	for _, c := range cases {
		metric := map[string]string{"rps": "rps", "p99": "p99_ms"}[c.name]
		now := []Figure{{Cell: "c", Name: c.name, Metric: metric, Better: c.better, After: c.after, Estimator: "geomean"}}
		rs := Compare(now, old, 5)
		if len(rs) != 1 {
			t.Fatalf("%s %v: %d results", c.name, c.after, len(rs))
		}
		if rs[0].Failed != c.wantFailed || math.Abs(rs[0].ChangePct-c.wantChange) > 1e-9 {
			t.Errorf("%s %v: failed %v change %v, want %v %v", c.name, c.after, rs[0].Failed, rs[0].ChangePct, c.wantFailed, c.wantChange)
		}
	}
}

// TestNotGated: figures that cannot be compared are left out of Compare
// and WhyNot names the reason.
func TestNotGated(t *testing.T) {
	base := Figure{Cell: "c", Name: "x", Metric: "rps", Better: "higher", After: 100, Estimator: "geomean"}
	cases := []struct {
		old, now Figure
		why      string
	}{
		{base, Figure{Cell: "c", Name: "y", Metric: "rps", Better: "higher", After: 1, Estimator: "geomean"}, "not in the baseline"},
		{Figure{Cell: "c", Name: "x", Metric: "rps", Better: "higher", After: 0, Estimator: "geomean"}, base, "0 or unknown"},
		{base, Figure{Cell: "c", Name: "x", Metric: "rps", Better: "higher", After: math.NaN(), Estimator: "geomean"}, "this run's figure is unknown"},
		{base, Figure{Cell: "c", Name: "x", Metric: "ops", Better: "higher", After: 1, Estimator: "geomean"}, "the baseline's is rps"},
		{Figure{Cell: "c", Name: "x", Metric: "rps", Better: "higher", After: 100, Estimator: "mean"}, base, "record the baseline again"},
	}
	for _, c := range cases {
		old := ByID([]Figure{c.old})
		if rs := Compare([]Figure{c.now}, old, 5); len(rs) != 0 {
			t.Errorf("%+v against %+v was gated: %+v", c.now, c.old, rs)
		}
		if why := WhyNot(c.now, old); !strings.Contains(why, c.why) {
			t.Errorf("WhyNot = %q, want %q", why, c.why)
		}
	}
	if why := WhyNot(base, ByID([]Figure{base})); why != "" {
		t.Errorf("a comparable figure: WhyNot = %q", why)
	}
}

// TestParseBaseline reads the named and displayed comparisons of a JSON
// record, drops a displayed one that repeats a named one, and falls back to
// mean_b for records made before the geometric mean.
func TestParseBaseline(t *testing.T) {
	rec := `{"cells":[{"name":"cmp","outputs":[
	    {"type":"comparison","value":{"metric":"rps","better":"higher","geomean_b":120}},
	    {"type":"comparison","value":{"metric":"p99_ms","better":"lower","mean_b":7}},
	    {"type":"table","value":{}}]}],
	  "named":[{"cell":"cmp","name":"r","type":"comparison","value":{"metric":"rps","better":"higher","geomean_b":120}}],
	  "provenance":{"host":{"cpu":"x","cores":2,"mem_bytes":4294967296},"params":{"clients":"8"}}}`
	b, err := ParseBaseline([]byte(rec))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]Figure{}
	for _, f := range b.Figures {
		ids[f.ID()] = f
	}
	if len(b.Figures) != 2 || ids["cmp/r"].Estimator != "geomean" || ids["cmp/p99_ms"].Estimator != "mean" || ids["cmp/p99_ms"].After != 7 {
		t.Errorf("figures = %+v", b.Figures)
	}
	if b.Host.Cores != 2 || b.Params["clients"] != "8" {
		t.Errorf("host %+v params %v", b.Host, b.Params)
	}
	if _, err := ParseBaseline([]byte("<html>")); err == nil || !strings.Contains(err.Error(), "-format json") {
		t.Errorf("not JSON: %v", err)
	}
}

func TestDiffs(t *testing.T) {
	a := Host{CPU: "A", Cores: 2, MemBytes: 4 << 30}
	if d := HostDiff(a, a); d != "" {
		t.Errorf("same host: %q", d)
	}
	if d := HostDiff(a, Host{CPU: "A", Cores: 4, MemBytes: 4<<30 + 100}); d != "2 vs 4 cores" {
		t.Errorf("cores: %q", d)
	}
	d := ParamDiff(map[string]string{"a": "1", "b": "2"}, map[string]string{"a": "3", "c": "4"})
	if d != "a=1 vs 3, b=2 vs default, c default vs 4" {
		t.Errorf("params: %q", d)
	}
}
