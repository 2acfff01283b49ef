package statetest

import (
	"testing"
)

// A cache=false cell runs every time, but render, cells and index show its
// last run (as ran, with its outputs) instead of never; its dependents are
// shown from the cache too.
func TestCacheFalseShowsLastRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cache := dir + "/cache"
	src := "# %% fill cache=false\nx = 41\nprint(\"filled\")\n\n# %% use\ny = x + 1\ny\n"
	r := RunNB(t, dir, cache, src, nil, true)
	if r.Status["fill"] != "ran" || r.Outputs["use"] != "42" {
		t.Fatalf("run: fill %s, use %q", r.Status["fill"], r.Outputs["use"])
	}
	rr := RunNB(t, dir, cache, src, nil, false) // render: from the cache alone
	if rr.Status["fill"] != "ran" || rr.Outputs["fill"] != "filled\n" {
		t.Errorf("render shows fill %s %q, want ran \"filled\\n\" (%s)", rr.Status["fill"], rr.Outputs["fill"], rr.Why["fill"])
	}
	if rr.Status["use"] != "hit" || rr.Outputs["use"] != "42" {
		t.Errorf("render shows use %s %q, want hit 42", rr.Status["use"], rr.Outputs["use"])
	}
	r2 := RunNB(t, dir, cache, src, nil, true)
	if r2.Status["fill"] != "ran" {
		t.Errorf("second run: fill %s, want ran (cache=false runs every time)", r2.Status["fill"])
	}
}
