package workload

import (
	"context"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

// TestExecHyperfineFigures: a command run shows its own columns (mean ± σ,
// min … max, user, sys), not req/s and generator CPU per request; σ and
// min are checked against the per-run wall times the run also exposes.
func TestExecHyperfineFigures(t *testing.T) {
	g := mustExec(t, `
r = workload.exec("i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done", runs = 5, warmup = 1)
assert.eq(len(r.user_ms), 5)
assert.eq(len(r.sys_ms), 5)
assert.true(sum_(r.user_ms) > 0)
`, starlark.StringDict{"sum_": starlark.NewBuiltin("sum_", func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		total := 0.0
		for v := range starlark.Elements(args[0].(starlark.Iterable)) {
			f, _ := starlark.AsFloat(v)
			total += f
		}
		return starlark.Float(total), nil
	})})
	r := g["r"].(*Run)
	w := r.d.WallMs
	mean, ss := 0.0, 0.0
	for _, x := range w {
		mean += x
	}
	mean /= float64(len(w))
	for _, x := range w {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(len(w)-1))
	if got, _ := starlark.AsFloat(attrOf(t, r, "stddev")); math.Abs(got-sd) > 1e-9 {
		t.Errorf("stddev = %v, want %v from %v", got, sd, w)
	}
	if got, _ := starlark.AsFloat(attrOf(t, r, "min")); got != slices.Min(w) {
		t.Errorf("min = %v, want %v", got, slices.Min(w))
	}
	for i := range w {
		if u, s, c := r.d.UserMs[i], r.d.SysMs[i], r.d.CPUMs[i]; math.Abs(u+s-c) > 0.002 {
			t.Errorf("run %d: user %v + sys %v != cpu %v", i, u, s, c)
		}
	}
	page := r.HTML()
	for _, want := range []string{"mean ± σ", "min … max", "<th>user</th>", "<th>sys</th>", fmtMs(mean) + " ± " + fmtMs(sd)} {
		if !strings.Contains(page, want) {
			t.Errorf("exec run's table lacks %q:\n%s", want, page)
		}
	}
	for _, bad := range []string{"req/s", "gen CPU/req"} {
		if strings.Contains(page, bad) || strings.Contains(r.Markdown(), bad) {
			t.Errorf("exec run's table shows HTTP column %q", bad)
		}
	}
}

// TestExecOutlierWarning: one run of eight sleeps 1.5 s where the others
// take a few ms (a few hundred on a box busy compiling); the run warns,
// naming that run.
func TestExecOutlierWarning(t *testing.T) {
	dir := t.TempDir()
	n := filepath.Join(dir, "n")
	g := mustExec(t, `
r = workload.exec("n=$(cat `+n+` 2>/dev/null || echo 0); n=$((n+1)); echo $n > `+n+`; [ $n -eq 4 ] && sleep 1.5; true", runs = 8, warmup = 0)
`, nil)
	r := g["r"].(*Run)
	ws := strings.Join(r.d.Warnings, "\n")
	if !strings.Contains(ws, "statistical outliers: run ") || !regexp.MustCompile(`\b4 \([1-9][0-9]{3,} ms`).MatchString(ws) {
		t.Errorf("no outlier warning naming run 4; warnings: %q, wall: %v", ws, r.d.WallMs)
	}
	if quiet := execWarnings([]float64{10, 10.2, 9.9, 10.1, 10.3, 9.8}); len(quiet) != 0 {
		t.Errorf("steady runs warned: %v", quiet)
	}
	if cold := execWarnings([]float64{40, 10.2, 9.9, 10.1, 10.3, 9.8}); len(cold) == 0 || !strings.Contains(strings.Join(cold, " "), "first run") {
		t.Errorf("a cold first run did not warn: %v", cold)
	}
}

func attrOf(t *testing.T, r *Run, name string) starlark.Value {
	t.Helper()
	v, err := r.Attr(name)
	if err != nil || v == nil {
		t.Fatalf("run.%s: %v", name, err)
	}
	return v
}

// TestInterruptedRunSaysSo: a run cut by Ctrl-C has no observer figures;
// reading one must say the run was interrupted, not that the field does
// not exist (an interrupted soak window surfaced that way).
func TestInterruptedRunSaysSo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g, err := execStar(t, ctx, `r = workload.exec("sleep 1", runs = 2, warmup = 0)`, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := g["r"].(*Run)
	if !r.Interrupted() {
		t.Fatal("run not interrupted")
	}
	_, err = execStar(t, context.Background(), `x = r.server_cpu_us_per_req`, starlark.StringDict{"r": r})
	if err == nil || !strings.Contains(err.Error(), "interrupted (Ctrl-C) before its figures were taken") {
		t.Errorf("reading a figure of an interrupted run: %v", err)
	}
}
