package starval

import (
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// TestMissingMetricHints: a misspelt metric gets "did you mean", and a
// metric missing from an interrupted run says the run was interrupted.
func TestMissingMetricHints(t *testing.T) {
	run := starlarkstruct.FromStringDict(starlark.String("run"), starlark.StringDict{
		"buffers_per_req": starlark.Float(3), "rps": starlark.Float(100), "interrupted": starlark.False})
	_, err := Metric(&starlark.Thread{}, run, starlark.String("bufers_per_req"))
	if err == nil || !strings.Contains(err.Error(), `(did you mean "buffers_per_req"?)`) {
		t.Errorf("misspelt metric: %v", err)
	}
	if _, err := Metric(&starlark.Thread{}, run, starlark.String("tps_per_core")); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("an unrelated name got a suggestion: %v", err)
	}
	d := starlark.NewDict(1)
	_ = d.SetKey(starlark.String("rss_mb"), starlark.Float(1))
	if _, err := Metric(&starlark.Thread{}, d, starlark.String("rs_mb")); err == nil || !strings.Contains(err.Error(), `"rss_mb"?`) {
		t.Errorf("dict key not suggested: %v", err)
	}
	cut := starlarkstruct.FromStringDict(starlark.String("run"), starlark.StringDict{"rps": starlark.Float(1), "interrupted": starlark.True})
	if _, err := Metric(&starlark.Thread{}, cut, starlark.String("server_cpu_us_per_req")); err == nil || !strings.Contains(err.Error(), "interrupted (Ctrl-C)") {
		t.Errorf("interrupted run: %v", err)
	}
}
