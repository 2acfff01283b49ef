package mongowire

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/loadgentest"
	"github.com/benchbook/benchbook/builtins/workload/mongotest"
	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// TestMongoGeneratorTimeIsNotLatency: a closed loop whose generator sleeps
// a known time per request, against a real wire-protocol server (FerretDB
// on loopback) that finds one document by _id in well under it: the sleep
// is the generator's, not the server's (loadgentest.RunSlowGenerator says
// what must hold; a failed generator names no tag: untagged).
func TestMongoGeneratorTimeIsNotLatency(t *testing.T) {
	timing.Only(t, "latency against a generator's known sleep")
	uri := mongotest.Start(t) + "bench"
	gen := func(seq int64) (*MongoRequest, error) {
		time.Sleep(loadgentest.SlowGenerator)
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
	loadgentest.RunSlowGenerator(t, tgt, loadgen.Untagged)
}
