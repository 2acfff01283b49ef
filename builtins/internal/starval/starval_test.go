package starval

import (
	"math"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// A run-like struct: rps, a p(q) method, errors by class, a method.
func TestMetric(t *testing.T) {
	th := &starlark.Thread{}
	p := starlark.NewBuiltin("p", func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		q, _ := starlark.AsFloat(args[0])
		return starlark.Float(q / 10), nil
	})
	errs := starlark.NewDict(2)
	errs.SetKey(starlark.String("timeout"), starlark.MakeInt(2))
	errs.SetKey(starlark.String("refused"), starlark.MakeInt(3))
	run := starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"rps": starlark.Float(1200), "p": p, "errors": errs,
	})
	double, _ := starlark.ExecFile(th, "f.star", "def f(r):\n    return r.rps * 2\n", nil)
	for _, tc := range []struct {
		metric starlark.Value
		want   float64
		err    string
	}{
		{starlark.String("rps"), 1200, ""},
		{starlark.String("p99"), 9.9, ""},
		{starlark.String("p999"), 9.99, ""},
		{starlark.String("errors"), 5, ""},
		{double["f"], 2400, ""},
		{starlark.String("nope"), 0, `struct has no metric "nope"`},
		{starlark.MakeInt(3), 0, "metric must be a name or a function"},
	} {
		got, err := Metric(th, run, tc.metric)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.metric, err, tc.err)
			}
			continue
		}
		if err != nil || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s = %v (%v), want %v", tc.metric, got, err, tc.want)
		}
	}
	if got, err := Metric(th, starlark.Float(7), starlark.String("rps")); err != nil || got != 7 {
		t.Errorf("a number is its own metric: %v %v", got, err)
	}
}
