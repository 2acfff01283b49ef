package metric

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/profile"
	"github.com/benchbook/benchbook/builtins/internal/profile/starprofile"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// profiledRun is a run-like struct with a profile of the folded text.
func profiledRun(t *testing.T, text string, valid bool) starlark.Value {
	t.Helper()
	p, err := profile.ParseFolded(strings.NewReader(text), 2_000_000)
	if err != nil {
		t.Fatal(err)
	}
	p.Source, p.Window = "perf", time.Second
	d, err := starprofile.FromProfile(p, []string{"hot"}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	v, err := starprofile.New(d)
	if err != nil {
		t.Fatal(err)
	}
	reason := ""
	if !valid {
		reason = "process hot died"
	}
	return starlarkstruct.FromStringDict(starlark.String("run"), starlark.StringDict{"profile": v,
		"valid": starlark.Bool(valid), "invalid_reason": starlark.String(reason)})
}

// swapExperiment is an experiment of pairs where B moves work from hotA
// to hotB, as abab returns one.
func swapExperiment(t *testing.T, pairs int) starlark.Value {
	t.Helper()
	var a, b []starlark.Value
	for i := range pairs {
		a = append(a, profiledRun(t, fmt.Sprintf("main;hotA %d\nmain;hotB %d\nmain;gc %d\n", 500+7*i, 100-3*i, 40+i), true))
		b = append(b, profiledRun(t, fmt.Sprintf("main;hotA %d\nmain;hotB %d\nmain;gc %d\n", 102+4*i, 490-6*i, 41-i), true))
	}
	runs := starlark.NewDict(2)
	runs.SetKey(starlark.String("base"), starlark.NewList(a))
	runs.SetKey(starlark.String("swapped"), starlark.NewList(b))
	return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"arms": starlark.NewList([]starlark.Value{starlark.String("base"), starlark.String("swapped")}), "runs": runs})
}

// compare_profiles takes what compare takes (an experiment, or two lists
// with b = ...) and gives the functions that moved, B - A, with the
// experiment's arm names as labels.
func TestCompareProfiles(t *testing.T) {
	exp := swapExperiment(t, 4)
	startest.MustExec(t, startest.Options{Modules: testModules(), Globals: starlark.StringDict{"exp": exp}}, `
c = compare_profiles(exp)
assert.eq((c.a_label, c.b_label, c.pairs), ("base", "swapped", 4))
hot_a = c.function("hotA")
assert.eq(hot_a.verdict, "IMPROVES")
assert.true(hot_a.ci[1] < 0)
assert.true(abs(hot_a.delta_us_per_req - (hot_a.b_us_per_req - hot_a.a_us_per_req)) < 1e-9)
assert.eq(c.function("hotB").verdict, "WORSENS")
assert.eq(c.function("gc").verdict, "~")
assert.true("hotA" in c.improves and "hotA" not in c.worsens)
assert.true("hotB" in c.worsens and "gc" not in c.improves + c.worsens)
assert.eq(c.functions[0].name in ["hotA", "hotB"], True)
assert.true("Benjamini-Hochberg" in c.multiplicity)
assert.true("paired t" in c.method)
assert.true("signed-rank" in c.why)
lists = compare_profiles(exp.runs["base"], exp.runs["swapped"])
assert.eq((lists.a_label, lists.b_label), ("A", "B"))
assert.eq(lists.function("hotA").delta_us_per_req, hot_a.delta_us_per_req)
`)
}

func TestCompareProfilesRefuses(t *testing.T) {
	exp := swapExperiment(t, 2)
	bad := profiledRun(t, "main;hotA 1\n", false)
	plain := starlarkstruct.FromStringDict(starlark.String("run"), starlark.StringDict{"profile": starlark.None})
	g := starlark.StringDict{"exp": exp, "bad": bad, "plain": plain}
	for src, want := range map[string]string{
		`compare_profiles(exp.runs["base"], exp.runs["swapped"][:1])`:         "compare_profiles: the arms are not paired: 2 A runs and 1 B runs",
		`compare_profiles(exp.runs["base"], [exp.runs["swapped"][0], plain])`: "compare_profiles: B run 2 (a struct) has no profile: measure it with profile = True",
		`compare_profiles(exp.runs["base"], [exp.runs["swapped"][0], bad])`:   "compare_profiles: B run 2: invalid run (process hot died)",
		`compare_profiles(42)`:                   "compare_profiles: exp_or_a is neither an experiment",
		`compare_profiles(exp, fdr = 0.9)`:       "compare_profiles: fdr must be between 0 and 0.5",
		`compare_profiles(exp, min_share = 0.0)`: "compare_profiles: min_share must be between 0 and 1",
	} {
		_, err := startest.Exec(t, startest.Options{Modules: testModules(), Globals: g}, src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n  error %v\n  want %s", src, err, want)
		}
	}
	if _, err := startest.Exec(t, startest.Options{Modules: testModules(), Globals: g}, `compare_profiles(exp.runs["base"], [exp.runs["swapped"][0], bad], allow_invalid = True)`); err != nil {
		t.Errorf("allow_invalid = True: %v", err)
	}
}
