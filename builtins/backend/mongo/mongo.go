// Package mongo reaches a MongoDB server the user runs: backend.mongo(uri).
//
// The notebook's database on it is a tracked resource (state.go): cells
// record the state they ran on and left, snapshots are dumps of the
// database, and a restore reloads one. The server's status and the named
// collections' stats are an observer (observe.go).
package mongo

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/internal/starbson"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/redact"
)

// Handle is the value of backend.mongo(uri, db = "", collections = []):
// a MongoDB server the user runs (or a container), reached by URI.
type Handle struct {
	connURI  string // what we connect with; may hold a password, never shown
	db       string
	observed []string // collections observed by name
	client   *mongo.Client
	version  string
	id       string            // resource dir; "" when not tracked
	res      *runtime.Resource // what the runtime tracks; nil when not tracked

	mu     sync.Mutex
	marked string // content hash at the last state mark
}

var (
	_ handle.Observer = (*Handle)(nil)
	_ handle.Stateful = (*Handle)(nil)
	_ handle.Mongo    = (*Handle)(nil)
)

// Kind is backend.mongo(uri, db = "", collections = [], track = True).
var Kind = handle.Kind{Name: "mongo", Builtin: starlark.NewBuiltin("backend.mongo", builtin)}

func (h *Handle) String() string {
	return fmt.Sprintf("<mongo %s %s db %s>", h.version, h.uri(), h.db)
}
func (h *Handle) Type() string          { return "mongo" }
func (h *Handle) Freeze()               {}
func (h *Handle) Truth() starlark.Bool  { return true }
func (h *Handle) Hash() (uint32, error) { return 0, errors.New("unhashable type: mongo") }

// uri is the URI as shown: no password.
func (h *Handle) uri() string { return redact.String(h.connURI) }

// ConnURI and Database are what workload.mongo connects with.
func (h *Handle) ConnURI() string  { return h.connURI }
func (h *Handle) Database() string { return h.db }

var mongoMethods = kit.Methods[*Handle]{
	"command":      (*Handle).command,
	"insert":       (*Handle).insert,
	"find":         (*Handle).find,
	"count":        (*Handle).count,
	"create_index": (*Handle).createIndex,
	"drop_index":   (*Handle).dropIndex,
	"drop":         (*Handle).drop,
	"stats":        (*Handle).stats,
	"fingerprint":  (*Handle).fingerprint,
}

func (h *Handle) Attr(name string) (starlark.Value, error) {
	switch name {
	case "uri":
		return starlark.String(h.uri()), nil
	case "db":
		return starlark.String(h.db), nil
	case "version":
		return starlark.String(h.version), nil
	}
	return mongoMethods.Bind(h, "mongo", name), nil
}

func (h *Handle) AttrNames() []string {
	return mongoMethods.Names("uri", "db", "version")
}

// builtin is backend.mongo(uri, db = "", collections = [], track = True).
// track = False leaves the database untracked (no dumps, no content hash
// per cell, for a database too big to read whole): cached cells are then
// reused whatever state the database is in, and the record says so.
func builtin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	h := &Handle{}
	var colls *starlark.List
	track := true
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "uri", &h.connURI, "db?", &h.db, "collections?", &colls, "track?", &track); err != nil {
		return nil, err
	}
	redact.Learn("uri", h.connURI)
	var err error
	if h.observed, err = stringList(colls); err != nil {
		return nil, fmt.Errorf("%s: collections: %w", b.Name(), err)
	}
	if h.db == "" {
		if u, err := url.Parse(h.connURI); err == nil {
			h.db = strings.TrimPrefix(u.Path, "/")
		}
	}
	if h.db == "" {
		return nil, fmt.Errorf("%s: db is required (or a database in the URI's path)", b.Name())
	}
	if err := h.connect(runtime.Context(th)); err != nil {
		return nil, fmt.Errorf("%s: %s", b.Name(), redact.String(err.Error()))
	}
	runtime.AtExit(th, h.Close)
	if !track {
		runtime.Warn(th, "%s: database %s is not tracked (track = False): cells that use it are reused from the cache whatever state it is in", b.Name(), h.db)
		return h, nil
	}
	if err := h.register(th); err != nil {
		return nil, fmt.Errorf("%s: %s", b.Name(), redact.String(err.Error()))
	}
	return h, nil
}

func stringList(l *starlark.List) ([]string, error) {
	if l == nil {
		return nil, nil
	}
	out := make([]string, l.Len())
	for i := range out {
		s, ok := starlark.AsString(l.Index(i))
		if !ok || s == "" {
			return nil, fmt.Errorf("[%d]: want a name, got %s", i, l.Index(i).Type())
		}
		out[i] = s
	}
	return out, nil
}

// connect opens the client and reads the server's version.
func (h *Handle) connect(ctx context.Context) error {
	opts := options.Client().ApplyURI(h.connURI).SetMaxPoolSize(4).SetServerSelectionTimeout(10 * time.Second)
	if err := opts.Validate(); err != nil {
		return fmt.Errorf("uri: %w", err)
	}
	c, err := mongo.Connect(opts)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	var info struct {
		Version string `bson:"version"`
	}
	if err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
		c.Disconnect(context.Background())
		return fmt.Errorf("connect: %w", err)
	}
	h.client, h.version = c, info.Version
	return nil
}

// Close disconnects from the server (the server is the user's).
func (h *Handle) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.client.Disconnect(ctx)
}

// database returns the notebook's database after announcing the use (or
// change) of its state.
func (h *Handle) database(th *starlark.Thread, change bool) (*mongo.Database, error) {
	if err := h.touch(th, change); err != nil {
		return nil, err
	}
	return h.client.Database(h.db), nil
}

// command is m.command(cmd): runs a command document on the database and
// returns its answer as a dict. A command may write: it counts as a change.
func (h *Handle) command(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var cmd *starlark.Dict
	if err := starlark.UnpackArgs(name, args, kwargs, "cmd", &cmd); err != nil {
		return nil, err
	}
	doc, err := starbson.Doc(cmd)
	if err != nil {
		return nil, fmt.Errorf("%s: cmd: %w", name, err)
	}
	db, err := h.database(th, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	raw, err := db.RunCommand(runtime.Context(th), doc).Raw()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return starbson.ToStarlark(raw)
}

// insert is m.insert(collection, docs): docs is a dict or a list of dicts;
// returns how many were inserted.
func (h *Handle) insert(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var coll string
	var docs starlark.Value
	if err := starlark.UnpackArgs(name, args, kwargs, "collection", &coll, "docs", &docs); err != nil {
		return nil, err
	}
	list, err := docList(docs)
	if err != nil {
		return nil, fmt.Errorf("%s: docs: %w", name, err)
	}
	db, err := h.database(th, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	res, err := db.Collection(coll).InsertMany(runtime.Context(th), list)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", name, coll, err)
	}
	return starlark.MakeInt(len(res.InsertedIDs)), nil
}

func docList(v starlark.Value) ([]any, error) {
	if d, ok := v.(*starlark.Dict); ok {
		doc, err := starbson.Doc(d)
		return []any{doc}, err
	}
	l, ok := v.(starlark.Indexable)
	if !ok || l.Len() == 0 {
		return nil, fmt.Errorf("want a dict or a non-empty list of dicts, got %s", v.Type())
	}
	out := make([]any, l.Len())
	for i := range out {
		doc, err := starbson.Doc(l.Index(i))
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out[i] = doc
	}
	return out, nil
}

// find is m.find(collection, filter = {}, sort = None, limit = 0) -> list of dicts.
func (h *Handle) find(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var coll string
	var filter, sortBy *starlark.Dict
	limit := 0
	if err := starlark.UnpackArgs(name, args, kwargs, "collection", &coll, "filter?", &filter, "sort?", &sortBy, "limit?", &limit); err != nil {
		return nil, err
	}
	f, err := optDoc(filter)
	if err != nil {
		return nil, fmt.Errorf("%s: filter: %w", name, err)
	}
	opts := options.Find().SetLimit(int64(limit))
	if sortBy != nil {
		s, err := starbson.Doc(sortBy)
		if err != nil {
			return nil, fmt.Errorf("%s: sort: %w", name, err)
		}
		opts.SetSort(s)
	}
	db, err := h.database(th, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	ctx := runtime.Context(th)
	cur, err := db.Collection(coll).Find(ctx, f, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", name, coll, err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	var out []starlark.Value
	for cur.Next(ctx) {
		d, err := starbson.ToStarlark(cur.Current)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, d)
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", name, coll, err)
	}
	return starlark.NewList(out), nil
}

func optDoc(d *starlark.Dict) (bson.D, error) {
	if d == nil {
		return bson.D{}, nil
	}
	return starbson.Doc(d)
}

// count is m.count(collection, filter = {}) -> int.
func (h *Handle) count(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var coll string
	var filter *starlark.Dict
	if err := starlark.UnpackArgs(name, args, kwargs, "collection", &coll, "filter?", &filter); err != nil {
		return nil, err
	}
	f, err := optDoc(filter)
	if err != nil {
		return nil, fmt.Errorf("%s: filter: %w", name, err)
	}
	db, err := h.database(th, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	n, err := db.Collection(coll).CountDocuments(runtime.Context(th), f)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", name, coll, err)
	}
	return starlark.MakeInt64(n), nil
}

// createIndex is m.create_index(collection, keys, name = "", unique = False) -> name.
func (h *Handle) createIndex(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var coll, iname string
	var keys *starlark.Dict
	var unique bool
	if err := starlark.UnpackArgs(name, args, kwargs, "collection", &coll, "keys", &keys, "name?", &iname, "unique?", &unique); err != nil {
		return nil, err
	}
	k, err := starbson.Doc(keys)
	if err != nil {
		return nil, fmt.Errorf("%s: keys: %w", name, err)
	}
	opts := options.Index().SetUnique(unique)
	if iname != "" {
		opts.SetName(iname)
	}
	db, err := h.database(th, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	got, err := db.Collection(coll).Indexes().CreateOne(runtime.Context(th), mongo.IndexModel{Keys: k, Options: opts})
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", name, coll, err)
	}
	return starlark.String(got), nil
}

// dropIndex is m.drop_index(collection, name).
func (h *Handle) dropIndex(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var coll, iname string
	if err := starlark.UnpackArgs(name, args, kwargs, "collection", &coll, "name", &iname); err != nil {
		return nil, err
	}
	db, err := h.database(th, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := db.Collection(coll).Indexes().DropOne(runtime.Context(th), iname); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", name, coll, err)
	}
	return starlark.None, nil
}

// drop is m.drop(collection): the collection and its indexes go.
func (h *Handle) drop(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var coll string
	if err := starlark.UnpackArgs(name, args, kwargs, "collection", &coll); err != nil {
		return nil, err
	}
	db, err := h.database(th, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := db.Collection(coll).Drop(runtime.Context(th)); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", name, coll, err)
	}
	return starlark.None, nil
}
