//go:build linux

// Command cpu compares client CPU per Mongo operation: benchbook's loop
// against the driver. The loop (mongowire.OpenMongo + loadgen.Run, what
// workload.mongo runs) runs against the official Go driver used plainly: the
// same find, the same clients (one goroutine each, back to back), the same
// server, the same window. CPU is this process's user + system time
// (getrusage) over the measurement window alone, divided by the operations
// completed in it. One JSON line per run goes to stdout; bench/mongo/run.sh
// keeps them.
//
//	cpu -uri mongodb://127.0.0.1:PORT/bench -seed -docs 10      fill bench.kv
//	cpu -uri ... -arm plain|loop -clients 4 -duration 10s       one run
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/mongowire"
	"github.com/benchbook/benchbook/runtime/hostinfo"
)

func main() {
	if err := run(context.Background(), os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cpu:", err)
		os.Exit(1)
	}
}

// config is one run's flags.
type config struct {
	uri      string
	arm      string
	clients  int
	duration time.Duration
	warmup   time.Duration
	seed     bool
	round    int
}

// result is one run's JSON line.
type result struct {
	Arm      string  `json:"arm"`
	Round    int     `json:"round"`
	Clients  int     `json:"clients"`
	Seconds  float64 `json:"seconds"`
	Ops      int64   `json:"ops"`
	Errors   int64   `json:"errors"`
	CPUUs    float64 `json:"cpu_us"`
	CPUPerOp float64 `json:"cpu_us_per_op"`
	OpsPerS  float64 `json:"ops_per_s"`
	At       string  `json:"at"`
	Load1    float64 `json:"load1"` // the box's 1-minute load average at the run's end
}

func run(ctx context.Context, stdout io.Writer, args []string) error {
	var c config
	fs := flag.NewFlagSet("cpu", flag.ContinueOnError)
	fs.StringVar(&c.uri, "uri", "", "mongodb:// URI with the database in its path")
	fs.StringVar(&c.arm, "arm", "", "plain (the driver in goroutines) or loop (benchbook's loadgen)")
	fs.IntVar(&c.clients, "clients", 4, "clients (goroutines / connections)")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "measurement window")
	fs.DurationVar(&c.warmup, "warmup", time.Second, "warmup before it")
	fs.BoolVar(&c.seed, "seed", false, "fill bench.kv with -docs documents and exit")
	fs.IntVar(&docs, "docs", docs, "documents in bench.kv (FerretDB decodes them all per find)")
	fs.IntVar(&c.round, "round", 0, "round number, recorded")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.seed {
		return seed(ctx, c.uri, docs)
	}
	var r result
	var err error
	switch c.arm {
	case "plain":
		r, err = plain(ctx, c)
	case "loop":
		r, err = loop(ctx, c)
	default:
		return errors.New("-arm must be plain or loop")
	}
	if err != nil {
		return err
	}
	r.Arm, r.Round, r.Clients, r.At = c.arm, c.round, c.clients, time.Now().UTC().Format(time.RFC3339)
	if r.Ops > 0 {
		r.CPUPerOp = r.CPUUs / float64(r.Ops)
	}
	r.OpsPerS = float64(r.Ops) / r.Seconds
	if l, err := hostinfo.LoadAvg(); err == nil {
		r.Load1 = l[0]
	}
	return json.NewEncoder(stdout).Encode(r)
}

// filter is the one operation both arms run: a point find by _id (which
// FerretDB pushes down to SQLite's primary key; a filter on another field
// makes it decode every document).
func filter(seq int64) bson.D { return bson.D{{Key: "_id", Value: seq % int64(docs)}} }

// docs is the collection's size (-docs), which filter's keys cycle over.
var docs = 10

func seed(ctx context.Context, uri string, n int) error {
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return err
	}
	defer c.Disconnect(ctx)
	coll := c.Database("bench").Collection("kv")
	_ = coll.Drop(ctx)
	docs := make([]any, n)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "k", Value: i}, {Key: "v", Value: "value"}}
	}
	_, err = coll.InsertMany(ctx, docs)
	return err
}

// plain is the driver as a Go programmer would use it: one client, one
// goroutine per client sending Find and reading the cursor to its end.
func plain(ctx context.Context, c config) (result, error) {
	cl, err := mongo.Connect(options.Client().ApplyURI(c.uri).SetMaxPoolSize(uint64(c.clients)))
	if err != nil {
		return result{}, err
	}
	defer cl.Disconnect(ctx)
	coll := cl.Database("bench").Collection("kv")
	start := time.Now()
	measureAt, end := start.Add(c.warmup), start.Add(c.warmup+c.duration)
	var ops, errs atomic.Int64
	var wg sync.WaitGroup
	for range c.clients {
		wg.Go(func() {
			for seq := int64(0); ; seq++ {
				t0 := time.Now()
				if !t0.Before(end) {
					return
				}
				err := find(ctx, coll, filter(seq))
				if t0.Before(measureAt) {
					continue
				}
				if err != nil {
					errs.Add(1)
				} else {
					ops.Add(1)
				}
			}
		})
	}
	time.Sleep(time.Until(measureAt))
	cpu0 := cpuUs()
	time.Sleep(time.Until(end))
	cpu1 := cpuUs()
	wg.Wait()
	return result{Seconds: c.duration.Seconds(), Ops: ops.Load(), Errors: errs.Load(), CPUUs: cpu1 - cpu0}, nil
}

func find(ctx context.Context, coll *mongo.Collection, f bson.D) error {
	cur, err := coll.Find(ctx, f)
	if err != nil {
		return err
	}
	for cur.Next(ctx) {
	}
	err = cur.Err()
	if cerr := cur.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// loop is workload.mongo's path: the same find through loadgen.
func loop(ctx context.Context, c config) (result, error) {
	spec := loadgen.Spec{Clients: c.clients, Duration: c.duration, Warmup: c.warmup, Window: time.Second, Timeout: 5 * time.Second}
	tgt, err := mongowire.OpenMongo(ctx, mongowire.MongoSpec{URI: c.uri, Database: "bench", Collection: "kv", Op: mongowire.MongoFind,
		Conns: c.clients, Timeout: spec.Timeout,
		Request: func(seq int64) (*mongowire.MongoRequest, error) {
			return &mongowire.MongoRequest{Filter: filter(seq)}, nil
		}})
	if err != nil {
		return result{}, err
	}
	defer tgt.Close()
	res := loadgen.Run(ctx, spec, tgt)
	var errs int64
	for _, n := range res.Errors {
		errs += n
	}
	return result{Seconds: res.Measured.Seconds(), Ops: res.Count, Errors: errs, CPUUs: float64(res.CPU.Microseconds())}, nil
}

// cpuUs is this process's user + system CPU, µs.
func cpuUs() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e3
}
