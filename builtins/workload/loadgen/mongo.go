package loadgen

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// The Mongo operations a request can run (MongoSpec.Op).
const (
	MongoFind      = "find"
	MongoInsert    = "insert"
	MongoUpdate    = "update"
	MongoAggregate = "aggregate"
	MongoBulk      = "bulk"
)

// MongoOps lists the operations, for messages.
var MongoOps = []string{MongoFind, MongoInsert, MongoUpdate, MongoAggregate, MongoBulk}

// MongoSpec is a MongoDB target: where, and what each request runs.
type MongoSpec struct {
	URI        string // a mongodb:// URI; may hold a password (never shown)
	Database   string
	Collection string
	Op         string                                 // one of MongoOps
	Request    func(seq int64) (*MongoRequest, error) // request seq's arguments
	Conns      int                                    // connections: the clients, or the open loop's max in flight
	Timeout    time.Duration                          // per operation, and the bound on connecting
}

// MongoRequest is one request's arguments; which fields count depends on
// the operation. Documents, filters and pipelines are anything the BSON
// encoder takes (bson.D keeps field order).
type MongoRequest struct {
	Filter     any                // find, update; nil for every document
	Projection any                // find
	Sort       any                // find
	Limit      int64              // find; 0 for no limit
	Update     any                // update: the update document or pipeline
	Upsert     bool               // update
	Many       bool               // update: every match, not the first
	Documents  []any              // insert
	Pipeline   any                // aggregate
	Writes     []mongo.WriteModel // bulk
	Ordered    bool               // bulk: stop at the first error

	// The driver's options for the fields above, built once per request
	// value: a static request is one value sent by every client, and the
	// builders cost allocations on the request path. Read-only once built.
	prep     sync.Once
	findOpts *options.FindOptionsBuilder
	oneOpts  *options.UpdateOneOptionsBuilder
	manyOpts *options.UpdateManyOptionsBuilder
	bulkOpts *options.BulkWriteOptionsBuilder
}

// options builds the request's driver options, once.
func (q *MongoRequest) options() *MongoRequest {
	q.prep.Do(func() {
		if q.Projection != nil || q.Sort != nil || q.Limit > 0 {
			q.findOpts = options.Find()
			if q.Projection != nil {
				q.findOpts.SetProjection(q.Projection)
			}
			if q.Sort != nil {
				q.findOpts.SetSort(q.Sort)
			}
			if q.Limit > 0 {
				q.findOpts.SetLimit(q.Limit)
			}
		}
		q.oneOpts = options.UpdateOne().SetUpsert(q.Upsert)
		q.manyOpts = options.UpdateMany().SetUpsert(q.Upsert)
		q.bulkOpts = options.BulkWrite().SetOrdered(q.Ordered)
	})
	return q
}

// MongoTarget runs one operation per request on one driver client whose
// pool holds Conns connections.
type MongoTarget struct {
	client *mongo.Client
	coll   *mongo.Collection
	op     string
	req    func(seq int64) (*MongoRequest, error)

	mu   sync.Mutex
	docs int64 // documents read (find, aggregate) or written by the measured requests
}

var (
	_ Target = (*MongoTarget)(nil)
	_ client = (*mongoClient)(nil)
)

// OpenMongo connects Conns connections up front (the run does not measure
// connection setup) and checks the operation, so that a typo is an error
// rather than a run in which every request failed. Close disconnects.
func OpenMongo(ctx context.Context, spec MongoSpec) (*MongoTarget, error) {
	if !validOp(spec.Op) {
		return nil, fmt.Errorf("op must be one of %v, got %q", MongoOps, spec.Op)
	}
	if spec.Request == nil {
		return nil, errors.New("no request arguments")
	}
	opts := options.Client().ApplyURI(spec.URI).SetMaxPoolSize(uint64(spec.Conns)).
		SetServerSelectionTimeout(spec.Timeout + 5*time.Second).SetConnectTimeout(spec.Timeout + 5*time.Second)
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("uri: %w", err)
	}
	c, err := mongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	t := &MongoTarget{client: c, coll: c.Database(spec.Database).Collection(spec.Collection), op: spec.Op, req: spec.Request}
	if err := t.warm(ctx, spec.Conns, spec.Timeout); err != nil {
		t.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	return t, nil
}

func validOp(op string) bool {
	for _, o := range MongoOps {
		if o == op {
			return true
		}
	}
	return false
}

// warm opens every connection of the pool: n pings at once.
func (t *MongoTarget) warm(ctx context.Context, n int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	errs := make(chan error, n)
	for range n {
		go func() { errs <- t.client.Ping(ctx, nil) }()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Close disconnects the client.
func (t *MongoTarget) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = t.client.Disconnect(ctx)
}

// Docs is how many documents the requests of the measurement window read
// or wrote.
func (t *MongoTarget) Docs() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.docs
}

func (t *MongoTarget) newClient() client { return &mongoClient{t: t} }

// mongoClient runs one request at a time; the driver's pool gives it a
// connection per operation.
type mongoClient struct {
	t    *MongoTarget
	docs int64
}

// abort: operations run under the load context, which Ctrl-C cancels, and
// the driver ends an operation whose context ends.
func (c *mongoClient) abort() {}

func (c *mongoClient) close() {
	c.t.mu.Lock()
	c.t.docs += c.docs
	c.t.mu.Unlock()
}

func (c *mongoClient) do(ctx context.Context, r request) string {
	req, err := c.t.req(r.seq)
	if err != nil || req == nil {
		return classGenerator
	}
	ctx, cancel := context.WithDeadline(ctx, r.deadline)
	defer cancel()
	n, err := c.run(ctx, req)
	if err != nil {
		if c := unreachable(err); c != "" {
			return c
		}
		if ctx.Err() == context.DeadlineExceeded {
			return classTimeout
		}
		return classifyMongo(err)
	}
	if r.measured {
		c.docs += n
	}
	return ""
}

// run sends the operation and reads its whole answer (a find's every
// batch), returning how many documents it read or wrote.
func (c *mongoClient) run(ctx context.Context, req *MongoRequest) (int64, error) {
	coll, req := c.t.coll, req.options()
	switch c.t.op {
	case MongoFind:
		if req.findOpts == nil {
			cur, err := coll.Find(ctx, orEmpty(req.Filter))
			return drain(ctx, cur, err)
		}
		cur, err := coll.Find(ctx, orEmpty(req.Filter), req.findOpts)
		return drain(ctx, cur, err)
	case MongoAggregate:
		cur, err := coll.Aggregate(ctx, req.Pipeline)
		return drain(ctx, cur, err)
	case MongoInsert:
		res, err := coll.InsertMany(ctx, req.Documents)
		if err != nil {
			return 0, err
		}
		return int64(len(res.InsertedIDs)), nil
	case MongoUpdate:
		return update(ctx, coll, req)
	}
	res, err := coll.BulkWrite(ctx, req.Writes, req.bulkOpts)
	if err != nil {
		return 0, err
	}
	return res.InsertedCount + res.ModifiedCount + res.DeletedCount + res.UpsertedCount, nil
}

func update(ctx context.Context, coll *mongo.Collection, req *MongoRequest) (int64, error) {
	var res *mongo.UpdateResult
	var err error
	if req.Many {
		res, err = coll.UpdateMany(ctx, orEmpty(req.Filter), req.Update, req.manyOpts)
	} else {
		res, err = coll.UpdateOne(ctx, orEmpty(req.Filter), req.Update, req.oneOpts)
	}
	if err != nil {
		return 0, err
	}
	return res.ModifiedCount + res.UpsertedCount, nil
}

// emptyFilter matches every document.
var emptyFilter = struct{}{}

func orEmpty(f any) any {
	if f == nil {
		return emptyFilter
	}
	return f
}

// drain reads every document of a cursor without decoding them; err is
// the opening's.
func drain(ctx context.Context, cur *mongo.Cursor, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	var n int64
	for cur.Next(ctx) {
		n++
	}
	err = cur.Err()
	if cerr := cur.Close(context.WithoutCancel(ctx)); err == nil {
		err = cerr
	}
	return n, err
}

// classifyMongo names a failed operation: a server error by its code
// ("mongo 11000" for a duplicate key), else as any other request's error.
func classifyMongo(err error) string {
	if c := unreachable(err); c != "" {
		return c
	}
	if mongo.IsTimeout(err) {
		return classTimeout
	}
	var we mongo.WriteException
	if errors.As(err, &we) && len(we.WriteErrors) > 0 {
		return mongoClass(we.WriteErrors[0].Code)
	}
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) && len(bwe.WriteErrors) > 0 {
		return mongoClass(bwe.WriteErrors[0].Code)
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		var ce mongo.CommandError
		if errors.As(err, &ce) && ce.Code != 0 {
			return mongoClass(int(ce.Code))
		}
	}
	if mongo.IsNetworkError(err) {
		if c := classify(err); c != classOther {
			return c
		}
		return classClosed
	}
	return classify(err)
}

// unreachable names a request that found no server to send to: the
// driver waits for one until the deadline, then says why the server was
// unusable (a refused connection when it died) in the topology it returns.
func unreachable(err error) string {
	var sse topology.ServerSelectionError
	if !errors.As(err, &sse) {
		return ""
	}
	for _, s := range sse.Desc.Servers {
		if s.LastError != nil {
			if c := classify(s.LastError); c != classOther && c != classInterrupted {
				return c
			}
		}
	}
	return ""
}

var mongoClasses sync.Map // int -> string, so error paths do not allocate

func mongoClass(code int) string {
	if s, ok := mongoClasses.Load(code); ok {
		return s.(string)
	}
	s := "mongo " + strconv.Itoa(code)
	mongoClasses.Store(code, s)
	return s
}
