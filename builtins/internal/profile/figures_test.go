package profile

import (
	"math"
	"strings"
	"testing"
)

func TestFiguresPerRequest(t *testing.T) {
	p, err := ParseFolded(strings.NewReader("main;a 30\nmain;a;b 10\nmain;c 60\n"), 1000)
	if err != nil {
		t.Fatal(err)
	}
	fig, err := p.Figures(Cost{Requests: 10, CPUUs: 200})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Function{}
	for _, f := range fig.Functions {
		got[f.Name] = f
	}
	// 100 samples of 1 µs = 100 µs sampled of the target's 200: shares
	// are of the samples, µs of the target's CPU.
	for name, want := range map[string][4]float64{
		"main": {0, 1, 0, 20}, "a": {0.3, 0.4, 6, 8}, "b": {0.1, 0.1, 2, 2}, "c": {0.6, 0.6, 12, 12},
	} {
		f := got[name]
		if d := math.Abs(f.Self-want[0]) + math.Abs(f.Total-want[1]) + math.Abs(f.SelfUsPerReq-want[2]) + math.Abs(f.TotalUsPerReq-want[3]); d > 1e-9 {
			t.Errorf("%s: self %g total %g, %g/%g µs/req; want %v", name, f.Self, f.Total, f.SelfUsPerReq, f.TotalUsPerReq, want)
		}
	}
	if fig.Coverage != 0.5 || len(fig.Warnings) != 1 {
		t.Errorf("coverage %g, warnings %q", fig.Coverage, fig.Warnings)
	}
	for _, bad := range []Cost{{Requests: 0}, {Requests: 1, CPUUs: -1}, {Requests: 1, CPUUs: math.NaN()}} {
		if _, err := p.Figures(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := (&Profile{}).Figures(Cost{Requests: 1}); err == nil || !strings.Contains(err.Error(), "no samples") {
		t.Errorf("empty profile: %v", err)
	}
}

// Recursion counts once in total: a function twice on a stack is still
// on it once.
func TestFunctionsRecursion(t *testing.T) {
	p, _ := ParseFolded(strings.NewReader("main;f;f;f 5\nmain;g 5\n"), 1)
	for _, f := range p.Functions() {
		if f.Name == "f" && (f.Total != 0.5 || f.Self != 0.5) {
			t.Errorf("f: total %g self %g", f.Total, f.Self)
		}
	}
	m := Merge(p, p)
	if m.Samples != 20 || len(m.Stacks) != 2 {
		t.Errorf("merge: %d samples, %d stacks", m.Samples, len(m.Stacks))
	}
}
