package mongowire

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

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
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

	// Tagged says Request names each request's tag (MongoRequest.Tag).
	Tagged bool
	// Requests is a mix instead of Op, Collection and Request: each
	// request is one of these, drawn by weight (Mix, seeded by Seed),
	// counted under its tag.
	Requests []MongoKind
	Seed     uint64
}

// MongoKind is one request of a mix.
type MongoKind struct {
	Tag        string // "": "op collection"
	Weight     float64
	Op         string
	Collection string
	Request    func(seq int64) (*MongoRequest, error)
}

// mongoKind is a MongoKind ready to send.
type mongoKind struct {
	tag  string
	op   string
	coll *mongo.Collection
	req  func(seq int64) (*MongoRequest, error)
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
	Tag        string             // a tagged generator's name for the request

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
	kinds  []mongoKind  // the one request, or a mix's
	draw   *loadgen.Mix // nil: kinds[0] every time
	tagged bool         // a mix's, or a tagged generator's

	mu   sync.Mutex
	docs int64 // documents read (find, aggregate) or written by the measured requests
}

var (
	_ loadgen.Target = (*MongoTarget)(nil)
	_ loadgen.Tagged = (*MongoTarget)(nil)
	_ loadgen.Client = (*mongoClient)(nil)
	_ loadgen.Maker  = (*mongoClient)(nil)
)

// OpenMongo connects Conns connections up front (the run does not measure
// connection setup) and checks the operation, so that a typo is an error
// rather than a run in which every request failed. Close disconnects.
func OpenMongo(ctx context.Context, spec MongoSpec) (*MongoTarget, error) {
	kinds := spec.Requests
	if len(kinds) == 0 {
		kinds = []MongoKind{{Op: spec.Op, Collection: spec.Collection, Request: spec.Request}}
	}
	weights := make([]float64, len(kinds))
	for i, k := range kinds {
		where := ""
		if len(spec.Requests) > 0 {
			where = fmt.Sprintf("requests[%d]: ", i)
		}
		if !validOp(k.Op) {
			return nil, fmt.Errorf("%sop must be one of %v, got %q", where, MongoOps, k.Op)
		}
		if k.Request == nil {
			return nil, errors.New(where + "no request arguments")
		}
		weights[i] = max(k.Weight, 0)
		if k.Weight == 0 {
			weights[i] = 1
		}
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
	t := &MongoTarget{client: c, tagged: spec.Tagged || len(spec.Requests) > 0}
	for _, k := range kinds {
		tag := k.Tag
		if tag == "" && len(spec.Requests) > 0 {
			tag = k.Op + " " + k.Collection
		}
		t.kinds = append(t.kinds, mongoKind{tag: tag, op: k.Op, coll: c.Database(spec.Database).Collection(k.Collection), req: k.Request})
	}
	if len(spec.Requests) > 0 {
		if t.draw, err = loadgen.NewMix(weights, spec.Seed); err != nil {
			t.Close()
			return nil, err
		}
	}
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

func (t *MongoTarget) NewClient() loadgen.Client { return &mongoClient{t: t} }

// mongoClient runs one request at a time; the driver's pool gives it a
// connection per operation.
type mongoClient struct {
	t    *MongoTarget
	docs int64

	next mongoMade // Make made the next request (k set): Do sends it
}

// mongoMade is a request made: its kind, its arguments (nil when the
// generator failed) and its tag.
type mongoMade struct {
	k   *mongoKind
	req *MongoRequest
	tag string
}

// Make makes the next request (see loadgen.Maker): a mix's draw and its
// generator's arguments.
func (c *mongoClient) Make(r loadgen.Request) string {
	k, req, tag := c.t.request(r.Stream, r.Seq)
	c.next = mongoMade{k, req, tag}
	return tag
}

// Abort: operations run under the load context, which Ctrl-C cancels, and
// the driver ends an operation whose context ends.
func (c *mongoClient) Abort() {}

func (c *mongoClient) Close() {
	c.t.mu.Lock()
	c.t.docs += c.docs
	c.t.mu.Unlock()
}

func (c *mongoClient) Do(ctx context.Context, r loadgen.Request) (string, string) {
	m := c.next
	if m.k == nil {
		m.k, m.req, m.tag = c.t.request(r.Stream, r.Seq)
	}
	c.next = mongoMade{}
	k, req, tag := m.k, m.req, m.tag
	if req == nil {
		return loadgen.ClassGenerator, tag
	}
	ctx, cancel := context.WithDeadline(ctx, r.Deadline)
	defer cancel()
	n, err := c.run(ctx, k, req)
	if err != nil {
		if c := unreachable(err); c != "" {
			return c, tag
		}
		if ctx.Err() == context.DeadlineExceeded {
			return loadgen.ClassTimeout, tag
		}
		return classifyMongo(err), tag
	}
	if r.Measured {
		c.docs += n
	}
	return "", tag
}

// request is request seq of stream: its kind (a mix's draw), its
// arguments (nil when the generator failed) and its tag.
func (t *MongoTarget) request(stream, seq int64) (*mongoKind, *MongoRequest, string) {
	k := &t.kinds[0]
	if t.draw != nil {
		k = &t.kinds[t.draw.Pick(stream, seq)]
	}
	req, err := k.req(seq)
	tag := k.tag
	switch {
	case err != nil || req == nil:
		req = nil
		if t.tagged && tag == "" {
			tag = loadgen.Untagged
		}
	case req.Tag != "":
		tag = req.Tag
	case t.tagged && tag == "":
		tag = loadgen.Untagged
	}
	return k, req, tag
}

// Shares are each tag's share of the mix's weights; nil without a mix.
func (t *MongoTarget) Shares() map[string]float64 {
	tags := make([]string, len(t.kinds))
	for i, k := range t.kinds {
		tags[i] = k.tag
	}
	return loadgen.MixShares(tags, t.draw)
}

// Tags are the mix's tags in order, each once; nil for an untagged target.
func (t *MongoTarget) Tags() []string {
	switch {
	case t.draw != nil:
		tags := make([]string, len(t.kinds))
		for i, k := range t.kinds {
			tags[i] = k.tag
		}
		return loadgen.UniqueTags(tags)
	case t.tagged:
		return []string{}
	}
	return nil
}

func (t *MongoTarget) TagOf(seq int64) string {
	_, _, tag := t.request(0, seq)
	return tag
}

// run sends the operation and reads its whole answer (a find's every
// batch), returning how many documents it read or wrote.
func (c *mongoClient) run(ctx context.Context, k *mongoKind, req *MongoRequest) (int64, error) {
	coll, req := k.coll, req.options()
	switch k.op {
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
		return loadgen.ClassTimeout
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
		if c := loadgen.Classify(err); c != loadgen.ClassOther {
			return c
		}
		return loadgen.ClassClosed
	}
	return loadgen.Classify(err)
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
			if c := loadgen.Classify(s.LastError); c != loadgen.ClassOther && c != loadgen.ClassInterrupted {
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

// ResetFigures forgets the documents earlier runs on this target read or
// wrote, for the same reason.
func (t *MongoTarget) ResetFigures() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.docs = 0
}
