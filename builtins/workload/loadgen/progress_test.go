package loadgen

import (
	"strings"
	"testing"
	"time"
)

// TestProgressLineSaysStepAndWhyNoP99: the live line did not say which
// pair and arm ran, and showed "p99 -" without saying why (issue 33).
func TestProgressLineSaysStepAndWhyNoP99(t *testing.T) {
	start := time.Now()
	r := &engine{spec: Spec{Duration: 3 * time.Second, Warmup: time.Second, Window: time.Second,
		Label: "SELECT id, effective, value FROM observation\nWHERE code = $1 AND effective >= $2\nORDER BY effective DESC LIMIT 20",
		Step:  "pair 2/4 B"}, shared: &windows{}, start: start, measureAt: start.Add(time.Second)}
	r.recs = append(r.recs, newRecorder(r.shared))
	for _, tc := range []struct {
		at   time.Duration
		fold bool
		want []string
	}{
		{500 * time.Millisecond, false, []string{"pair 2/4 B ", "warmup", "p99 not measured in warmup"}},
		{1500 * time.Millisecond, false, []string{"pair 2/4 B ", "p99 after the first 1s window"}},
		{2500 * time.Millisecond, true, []string{"pair 2/4 B ", "p99 2.01 ms (last 1s window)"}},
	} {
		if tc.fold {
			r.recs[0].record(2*time.Millisecond, 2*time.Millisecond, "", 0, "")
			r.recs[0].flush()
		}
		line := progressLine(r, start.Add(tc.at), 100, 0)
		for _, w := range tc.want {
			if !strings.Contains(line, w) {
				t.Errorf("at %s: %q lacks %q", tc.at, line, w)
			}
		}
		if strings.Contains(line, "\n") || strings.Contains(line, "p99 -") {
			t.Errorf("at %s: %q", tc.at, line)
		}
		if !strings.Contains(line, "SELECT id, effective, value FROM observation WHER…") {
			t.Errorf("at %s: the label is not one short line: %q", tc.at, line)
		}
	}
}
