package metric

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/profile"
	"github.com/benchbook/benchbook/builtins/internal/profile/starprofile"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime"
)

// compare_profiles(exp_or_a, b = None, a_label = "", b_label = "", fdr = 0.05,
// min_share = 0.01, allow_invalid = False) -> profile_comparison
//
// Per function, B against A in CPU per request across the pairs of an
// experiment (abab's: arms[0] is A, arms[1] is B) or of two lists of runs
// as long, every run measured with profile = True. Its functions are
// ranked by the size of the change, each with name, a_us_per_req,
// b_us_per_req, delta_us_per_req (B - A), ci (of the delta), verdict
// (IMPROVES when B spends less CPU in it, WORSENS when more, ~ otherwise)
// and reason; its text and record state the method and the multiplicity
// rule (starprofile.Why says why it is not compare()'s test). fdr is the
// false discovery rate held across the functions tested, min_share the
// share of CPU (in either arm) below which a function is not tested.

// profileMethod is an input of every cell that compares profiles: a cached
// comparison made by another method goes stale and is computed again.
const profileMethod = "compare_profiles"

var profileMethodVersion = "1: paired t on B - A in µs/req, spread floored at one sample; Benjamini-Hochberg; Benjamini-Yekutieli intervals"

// checkProfileMethod is the version of compare_profiles' method a cached
// cell names.
func checkProfileMethod(name string) (string, error) {
	if name != profileMethod {
		return "", fmt.Errorf("unknown method")
	}
	return profileMethodVersion, nil
}

func compareProfilesBuiltin(th *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var expOrA, b starlark.Value = nil, starlark.None
	o := starprofile.Options{FDR: profile.DefaultFDR, MinShare: profile.DefaultMinShare}
	var allowInvalid bool
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "exp_or_a", &expOrA, "b?", &b, "a_label?", &o.ALabel,
		"b_label?", &o.BLabel, "fdr?", &o.FDR, "min_share?", &o.MinShare, "allow_invalid?", &allowInvalid); err != nil {
		return nil, err
	}
	if !(o.FDR > 0 && o.FDR < 0.5) {
		return nil, fmt.Errorf("%s: fdr must be between 0 and 0.5, got %g", fn.Name(), o.FDR)
	}
	if !(o.MinShare > 0 && o.MinShare < 1) {
		return nil, fmt.Errorf("%s: min_share must be between 0 and 1, got %g", fn.Name(), o.MinShare)
	}
	ra, rb, err := profileArms(fn.Name(), expOrA, b, &o)
	if err != nil {
		return nil, err
	}
	da, err := profilesOf(fn.Name(), o.ALabel, ra, allowInvalid)
	if err != nil {
		return nil, err
	}
	db, err := profilesOf(fn.Name(), o.BLabel, rb, allowInvalid)
	if err != nil {
		return nil, err
	}
	if len(da) != len(db) {
		return nil, fmt.Errorf("%s: the arms are not paired: %d %s runs and %d %s runs", fn.Name(), len(da), o.ALabel, len(db), o.BLabel)
	}
	runtime.AddInput(th, runtime.Input{Kind: "profile_method", Name: profileMethod, Hash: profileMethodVersion})
	c, err := starprofile.Compare(da, db, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn.Name(), err)
	}
	return c, nil
}

// profileArms are the runs of A and B, from an experiment or two lists,
// the labels set as compare sets them.
func profileArms(name string, expOrA, b starlark.Value, o *starprofile.Options) (a, bs []starlark.Value, err error) {
	if b != starlark.None {
		o.ALabel, o.BLabel = or(o.ALabel, "A"), or(o.BLabel, "B")
		if a, err = runList(name, expOrA, "exp_or_a"); err == nil {
			bs, err = runList(name, b, "b")
		}
		return a, bs, err
	}
	h, ok := expOrA.(starlark.HasAttrs)
	var names, runs starlark.Value
	if ok {
		names, _ = h.Attr("arms")
		runs, _ = h.Attr("runs")
	}
	d, isDict := runs.(*starlark.Dict)
	if names == nil || !isDict {
		return nil, nil, fmt.Errorf("%s: exp_or_a is neither an experiment (arms, runs) nor a list of runs (with b = ...): got %s", name, expOrA.Type())
	}
	arms := starval.Items(names)
	if len(arms) < 2 {
		return nil, nil, fmt.Errorf("%s: the experiment has %d arm(s), need 2 (or pass b = ...)", name, len(arms))
	}
	aName, _ := starlark.AsString(arms[0])
	bName, _ := starlark.AsString(arms[1])
	o.ALabel, o.BLabel = or(o.ALabel, aName), or(o.BLabel, bName)
	for i, arm := range []string{aName, bName} {
		v, found, _ := d.Get(starlark.String(arm))
		if !found {
			return nil, nil, fmt.Errorf("%s: the experiment has no runs for arm %q", name, arm)
		}
		l, err := runList(name, v, "runs["+arm+"]")
		if err != nil {
			return nil, nil, err
		}
		if i == 0 {
			a = l
		} else {
			bs = l
		}
	}
	return a, bs, nil
}

func runList(name string, v starlark.Value, what string) ([]starlark.Value, error) {
	if _, ok := v.(starlark.Iterable); !ok {
		return nil, fmt.Errorf("%s: %s must be a list of runs, got %s", name, what, v.Type())
	}
	return starval.Items(v), nil
}

// profilesOf are the stored profiles of an arm's runs: every run must have
// one, and be valid unless allow_invalid.
func profilesOf(name, arm string, runs []starlark.Value, allowInvalid bool) ([]*starprofile.Data, error) {
	out := make([]*starprofile.Data, len(runs))
	for i, r := range runs {
		if why := invalidReason(r); why != "" && !allowInvalid {
			return nil, fmt.Errorf("%s: %s run %d: invalid run (%s); compare_profiles(..., allow_invalid = True) takes it anyway", name, arm, i+1, why)
		}
		p, _ := starval.Attr(r, "profile").(*starprofile.Value)
		if p == nil {
			return nil, fmt.Errorf("%s: %s run %d (a %s) has no profile: measure it with profile = True", name, arm, i+1, r.Type())
		}
		out[i] = p.Data()
	}
	return out, nil
}

// invalidReason is why a run's guards made it invalid, "" for a valid one.
func invalidReason(r starlark.Value) string {
	if v, ok := starval.Attr(r, "valid").(starlark.Bool); ok && !bool(v) {
		why, _ := starlark.AsString(starval.Attr(r, "invalid_reason"))
		return why
	}
	return ""
}
