package pgwire

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime/testsupport/pgtest"
	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// TestSQLGeneratorTimeIsNotLatency: a closed loop of workers over pgx (a
// TLS server: its sockets carry ciphertext, so no event loop reads them and
// each client is a goroutine's sqlClient) whose generator sleeps G per
// request, against a real PostgreSQL that answers SELECT in well under G.
// The truth: the sleep is the generator's, not the server's, so the
// latency of every request (those it made and those it failed to make)
// stays well under G; a generator error counts once, as "generator" in
// the tag the generator named.
func TestSQLGeneratorTimeIsNotLatency(t *testing.T) {
	timing.Only(t, "latency against a generator's known sleep")
	const g = 15 * time.Millisecond
	dsn := pgtest.Start(t, pgtest.Options{TLS: true}).DSN
	args := func(seq int64) ([]any, string, error) {
		time.Sleep(g)
		if seq%4 == 3 {
			return nil, "bad", errors.New("no such row")
		}
		return []any{seq}, "good", nil
	}
	tgt, err := OpenSQL(context.Background(), SQLSpec{DSN: dsn, Conns: 2, Timeout: 5 * time.Second,
		Statements: []Statement{{SQL: "SELECT $1::bigint"}}, TaggedArgs: args})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	if tgt.raw {
		t.Fatal("a TLS connection read raw: the run would not go through sqlClient")
	}
	res := loadgen.Run(context.Background(), loadgen.Spec{Clients: 2, Warmup: 100 * time.Millisecond, Duration: 600 * time.Millisecond,
		Window: 600 * time.Millisecond, Timeout: 5 * time.Second}, tgt)
	checkGeneratorNotLatency(t, res, g)
}

// checkGeneratorNotLatency checks a run whose generator slept g per
// request, named good requests "good" and failed every fourth as "bad".
func checkGeneratorNotLatency(t *testing.T, res *loadgen.Result, g time.Duration) {
	t.Helper()
	good, bad := res.Tags["good"], res.Tags["bad"]
	if good == nil || bad == nil {
		t.Fatalf("tags %v: want good and bad", res.Tags)
	}
	t.Logf("count %d, errors %v, intended %d; latency p50 %.3f ms p99 %.3f ms (generator %s a request); bad: count %d errors %v p50 %.3f ms",
		res.Count, res.Errors, res.Intended, loadgen.QuantileMs(res.Hist, 50), loadgen.QuantileMs(res.Hist, 99), g, bad.Count, bad.Errors, loadgen.QuantileMs(bad.Hist, 50))
	if res.Count == 0 || len(res.Errors) != 1 || res.Errors[loadgen.ClassGenerator] == 0 {
		t.Errorf("count %d, errors %v: want successes and generator errors only", res.Count, res.Errors)
	}
	if bad.Count != 0 || bad.Errors[loadgen.ClassGenerator] != res.Errors[loadgen.ClassGenerator] || loadgen.SumErrors(good.Errors) != 0 {
		t.Errorf("bad: count %d errors %v, good: errors %v; run's errors %v: each generator error once, in its tag",
			bad.Count, bad.Errors, good.Errors, res.Errors)
	}
	if got := res.Count + loadgen.SumErrors(res.Errors); got != res.Intended || good.Count != res.Count {
		t.Errorf("%d accounted for, %d intended, good %d of %d: every request once", got, res.Intended, good.Count, res.Count)
	}
	if p := loadgen.QuantileMs(res.Hist, 50); p > g.Seconds()*1e3/2 {
		t.Errorf("latency p50 %.3f ms: the generator's %s a request is in it", p, g)
	}
	if p := loadgen.QuantileMs(bad.Hist, 50); p > g.Seconds()*1e3/2 {
		t.Errorf("a failed generator's latency p50 %.3f ms: its %s is in it", p, g)
	}
	for _, w := range res.Warnings {
		if len(w) > 10 && w[:10] == "accounting" {
			t.Error(w)
		}
	}
}
