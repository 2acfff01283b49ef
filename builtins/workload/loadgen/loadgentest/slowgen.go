// Package loadgentest holds what the wire protocols' tests share: runs
// whose truth the test knows, and their checks. Only tests import it.
package loadgentest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// SlowGenerator is the known sleep of a generator in RunSlowGenerator's
// runs: its requests "good", every fourth (seq % 4 == 3) a failure.
const SlowGenerator = 15 * time.Millisecond

// RunSlowGenerator runs tgt, whose generator sleeps SlowGenerator per
// request, as a closed loop of 2 clients, and checks that the sleep is not
// in any request's latency: the server answers in well under it, so the
// latency of every request (those the generator made and those it failed
// to make) stays well under it, and each failure counts once, as
// "generator" in its tag, bad (the generator's name for it, or
// loadgen.Untagged when a failed generator names none).
func RunSlowGenerator(t *testing.T, tgt loadgen.Target, bad string) {
	t.Helper()
	g := SlowGenerator
	res := loadgen.Run(context.Background(), loadgen.Spec{Clients: 2, Warmup: 100 * time.Millisecond,
		Duration: 600 * time.Millisecond, Window: 600 * time.Millisecond, Timeout: 5 * time.Second}, tgt)
	good, failed := res.Tags["good"], res.Tags[bad]
	if good == nil || failed == nil {
		t.Fatalf("tags %v: want good and %s", res.Tags, bad)
	}
	t.Logf("count %d, errors %v, intended %d; latency p50 %.3f ms p99 %.3f ms (generator %s a request); failed: count %d errors %v p50 %.3f ms",
		res.Count, res.Errors, res.Intended, loadgen.QuantileMs(res.Hist, 50), loadgen.QuantileMs(res.Hist, 99), g,
		failed.Count, failed.Errors, loadgen.QuantileMs(failed.Hist, 50))
	if res.Count == 0 || len(res.Errors) != 1 || res.Errors[loadgen.ClassGenerator] == 0 {
		t.Errorf("count %d, errors %v: want successes and generator errors only", res.Count, res.Errors)
	}
	if failed.Count != 0 || failed.Errors[loadgen.ClassGenerator] != res.Errors[loadgen.ClassGenerator] || loadgen.SumErrors(good.Errors) != 0 {
		t.Errorf("failed: count %d errors %v, good: errors %v; run's errors %v: each generator error once, in its tag",
			failed.Count, failed.Errors, good.Errors, res.Errors)
	}
	if got := res.Count + loadgen.SumErrors(res.Errors); got != res.Intended || good.Count != res.Count {
		t.Errorf("%d accounted for, %d intended, good %d of %d: every request once", got, res.Intended, good.Count, res.Count)
	}
	if p := loadgen.QuantileMs(res.Hist, 50); p > g.Seconds()*1e3/2 {
		t.Errorf("latency p50 %.3f ms: the generator's %s a request is in it", p, g)
	}
	if p := loadgen.QuantileMs(failed.Hist, 50); p > g.Seconds()*1e3/2 {
		t.Errorf("a failed generator's latency p50 %.3f ms: its %s is in it", p, g)
	}
	for _, w := range res.Warnings {
		if strings.HasPrefix(w, "accounting") {
			t.Error(w)
		}
	}
}
