package mongowire

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/mongotest"
	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// TestMongoGeneratorTimeIsNotLatency: a closed loop whose generator sleeps
// G per request, against a real wire-protocol server (FerretDB on
// loopback) that finds one document by _id in well under G. The truth:
// the sleep is the generator's, not the server's, so the latency of every
// request (those it made and those it failed to make) stays well under G;
// a generator error counts once, as "generator", in its tag (untagged: a
// failed generator names none).
func TestMongoGeneratorTimeIsNotLatency(t *testing.T) {
	timing.Only(t, "latency against a generator's known sleep")
	const g = 15 * time.Millisecond
	uri := mongotest.Start(t) + "bench"
	gen := func(seq int64) (*MongoRequest, error) {
		time.Sleep(g)
		if seq%4 == 3 {
			return nil, errors.New("no such document")
		}
		return &MongoRequest{Filter: bson.D{{Key: "_id", Value: seq}}, Tag: "good"}, nil
	}
	tgt, err := OpenMongo(context.Background(), MongoSpec{URI: uri, Database: "bench", Collection: "kv", Op: MongoFind,
		Request: gen, Tagged: true, Conns: 2, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	res := loadgen.Run(context.Background(), loadgen.Spec{Clients: 2, Warmup: 100 * time.Millisecond,
		Duration: 600 * time.Millisecond, Window: 600 * time.Millisecond, Timeout: 5 * time.Second}, tgt)
	good, bad := res.Tags["good"], res.Tags[loadgen.Untagged]
	if good == nil || bad == nil {
		t.Fatalf("tags %v: want good and untagged", res.Tags)
	}
	t.Logf("count %d, errors %v, intended %d; latency p50 %.3f ms p99 %.3f ms (generator %s a request); failed: count %d errors %v p50 %.3f ms",
		res.Count, res.Errors, res.Intended, loadgen.QuantileMs(res.Hist, 50), loadgen.QuantileMs(res.Hist, 99), g,
		bad.Count, bad.Errors, loadgen.QuantileMs(bad.Hist, 50))
	if res.Count == 0 || len(res.Errors) != 1 || res.Errors[loadgen.ClassGenerator] == 0 {
		t.Errorf("count %d, errors %v: want successes and generator errors only", res.Count, res.Errors)
	}
	if bad.Count != 0 || bad.Errors[loadgen.ClassGenerator] != res.Errors[loadgen.ClassGenerator] || loadgen.SumErrors(good.Errors) != 0 {
		t.Errorf("failed: count %d errors %v, good: errors %v; run's errors %v: each generator error once, in its tag",
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
}
