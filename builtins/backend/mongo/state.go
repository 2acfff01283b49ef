package mongo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/starbson"
	"github.com/benchbook/benchbook/runtime"
)

// The notebook's database on a MongoDB server is a tracked resource
// (runtime/state.go), as a PostgreSQL cluster is: cells that use it record
// the state they ran on, cells that change it the state they left. The
// server is the user's, so benchbook cannot copy its files: a snapshot is a
// dump of the database (every collection's options, indexes and documents,
// as BSON) and a restore drops the database and reloads the dump. Writes
// are seen two ways: the methods that write say so, and the database's
// content hash (every document's bytes, and the indexes) moving between a
// cell's first use and its end catches the rest (a workload's updates,
// another client). Its cost is a read of the database per check: meant for
// the notebook-sized databases an investigation loads, not a production one.
// A database that holds what a dump cannot bring back (a view, a
// time-series collection) fails at its first dump: backend.mongo() on
// it, or the cell that created one, says so.

// StateID is the database's resource dir, or its URI when untracked.
func (h *Handle) StateID() string {
	if h.id == "" {
		return "mongo:" + h.uri() + "/" + h.db
	}
	return h.id
}

func (h *Handle) touch(th *starlark.Thread, change bool) error {
	if h.id == "" {
		return nil
	}
	return runtime.Touch(th, h.id, change)
}

// Files in the resource dir: the identity of the database's first state,
// and the content hash benchbook last saw (to see changes made while it
// was not running).
const (
	mongoInitialFile = "initial-state"
	mongoContentFile = "content"
)

func (h *Handle) register(th *starlark.Thread) error {
	sum := sha256.Sum256([]byte(h.uri() + "\x00" + h.db))
	dir, err := runtime.ResourceDir(th, "mongo-"+hex.EncodeToString(sum[:6]))
	if err != nil {
		return err
	}
	if h.id, err = filepath.Abs(dir); err != nil {
		return err
	}
	ctx := runtime.Context(th)
	now, err := h.contentHash(ctx)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	initial, created, outside := "", false, false
	if data, err := os.ReadFile(filepath.Join(h.id, mongoInitialFile)); err == nil {
		initial = strings.TrimSpace(string(data))
		last, _ := os.ReadFile(filepath.Join(h.id, mongoContentFile))
		outside = len(last) > 0 && strings.TrimSpace(string(last)) != now
	} else {
		initial, created = "mongo-"+now[:24], true
		if err := os.WriteFile(filepath.Join(h.id, mongoInitialFile), []byte(initial+"\n"), 0o644); err != nil {
			return err
		}
	}
	h.setMark(now)
	h.res = &runtime.Resource{
		ID:      h.id,
		Name:    "mongo database " + h.db + " of cell " + runtime.CellName(th),
		Initial: initial,
		Created: created,
		Outside: outside,
		Save:    func(dir, _ string) error { return h.dump(context.WithoutCancel(ctx), dir) },
		Load:    func(dir string) error { return h.reload(context.WithoutCancel(ctx), dir) },
		Moved:   h.moved,
		Shared:  true,
		Mark:    func() { s, _ := h.contentHash(context.Background()); h.setMark(s) },
	}
	return runtime.RegisterResource(th, h.res)
}

// Resource is the database's tracked resource; nil when track = False.
func (h *Handle) Resource() *runtime.Resource { return h.res }

func (h *Handle) setMark(s string) {
	h.mu.Lock()
	h.marked = s
	h.mu.Unlock()
	if s != "" && h.id != "" {
		os.WriteFile(filepath.Join(h.id, mongoContentFile), []byte(s+"\n"), 0o644)
	}
}

// moved reports whether the content changed since the last mark; when it
// cannot tell, it did.
func (h *Handle) moved() bool {
	now, err := h.contentHash(context.Background())
	h.mu.Lock()
	defer h.mu.Unlock()
	return err != nil || now == "" || now != h.marked
}

// collInfo is one collection as listCollections describes it.
type collInfo struct {
	Name    string   `bson:"name"`
	Type    string   `bson:"type"`
	Options bson.Raw `bson:"options"`
}

func (h *Handle) collections(ctx context.Context) ([]collInfo, error) {
	cur, err := h.client.Database(h.db).ListCollections(ctx, bson.D{})
	if err != nil {
		return nil, err
	}
	var out []collInfo
	if err := cur.All(ctx, &out); err != nil {
		return nil, err
	}
	kept := out[:0]
	for _, c := range out {
		if !strings.HasPrefix(c.Name, "system.") {
			kept = append(kept, c)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Name < kept[j].Name })
	return kept, nil
}

// indexSpecs lists a collection's indexes without the fields a server
// adds on its own (v, ns), sorted by name.
func (h *Handle) indexSpecs(ctx context.Context, coll string) ([]bson.D, error) {
	cur, err := h.client.Database(h.db).Collection(coll).Indexes().List(ctx)
	if err != nil {
		return nil, err
	}
	var specs []bson.D
	if err := cur.All(ctx, &specs); err != nil {
		return nil, err
	}
	for i, s := range specs {
		kept := s[:0]
		for _, e := range s {
			if e.Key != "v" && e.Key != "ns" {
				kept = append(kept, e)
			}
		}
		specs[i] = kept
	}
	sort.Slice(specs, func(i, j int) bool { return indexName(specs[i]) < indexName(specs[j]) })
	return specs, nil
}

func indexName(d bson.D) string {
	for _, e := range d {
		if e.Key == "name" {
			s, _ := e.Value.(string)
			return s
		}
	}
	return ""
}

// contentHash names the database's content: every collection's name,
// options, indexes and documents (as fingerprint hashes them).
func (h *Handle) contentHash(ctx context.Context) (string, error) {
	colls, err := h.collections(ctx)
	if err != nil {
		return "", err
	}
	sum := sha256.New()
	for _, c := range colls {
		specs, err := h.indexSpecs(ctx, c.Name)
		if err != nil {
			return "", err
		}
		fp, err := h.collFingerprint(ctx, c.Name, true)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(sum, "collection %q type %q options %s indexes %v docs %d %s\n", c.Name, c.Type, canonHex(c.Options), specs, fp.docs, fp.hash)
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}

func canonHex(raw bson.Raw) string {
	if len(raw) == 0 {
		return "-"
	}
	h := sha256.New()
	if err := starbson.Canonical(h, raw); err != nil {
		return "invalid"
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// collFP is a collection's fingerprint.
type collFP struct {
	docs int64
	hash string
}

// collFingerprint hashes each document and the sorted list of those
// hashes: the multiset of documents, not their order on disk. For the
// user's equivalence check a document is hashed canonically
// (starbson.Canonical: field order and number types do not matter); for
// state tracking (exact) by its bytes, since int32 7 becoming 7.0, or a
// field moved, is a change of the stored data (its size, its speed).
func (h *Handle) collFingerprint(ctx context.Context, coll string, exact bool) (collFP, error) {
	cur, err := h.client.Database(h.db).Collection(coll).Find(ctx, bson.D{})
	if err != nil {
		return collFP{}, err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	var hashes [][32]byte
	for cur.Next(ctx) {
		d := sha256.New()
		if exact {
			d.Write(cur.Current)
		} else if err := starbson.Canonical(d, cur.Current); err != nil {
			return collFP{}, err
		}
		var s [32]byte
		copy(s[:], d.Sum(nil))
		hashes = append(hashes, s)
	}
	if err := cur.Err(); err != nil {
		return collFP{}, err
	}
	sort.Slice(hashes, func(i, j int) bool { return bytes.Compare(hashes[i][:], hashes[j][:]) < 0 })
	all := sha256.New()
	for _, s := range hashes {
		all.Write(s[:])
	}
	return collFP{docs: int64(len(hashes)), hash: hex.EncodeToString(all.Sum(nil)[:16])}, nil
}

// fingerprint is m.fingerprint(collections = [...]): for each collection a
// struct(docs, hash) that depends on the multiset of its documents in
// canonical form, so a notebook can assert that two arms left the same data.
func (h *Handle) fingerprint(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var colls *starlark.List
	if err := starlark.UnpackArgs(name, args, kwargs, "collections", &colls); err != nil {
		return nil, err
	}
	names, err := stringList(colls)
	if err != nil {
		return nil, fmt.Errorf("%s: collections: %w", name, err)
	}
	if err := h.touch(th, false); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := starlark.NewDict(len(names))
	for _, c := range names {
		fp, err := h.collFingerprint(runtime.Context(th), c, false)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, c, err)
		}
		_ = out.SetKey(starlark.String(c), starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
			"docs": starlark.MakeInt64(fp.docs), "hash": starlark.String(fp.hash),
		}))
	}
	return out, nil
}

// dumpManifest lists a dump's collections in order; collection i's
// options, indexes and documents are in i.options, i.indexes and i.docs
// (concatenated BSON documents).
type dumpManifest struct {
	Collections []string `json:"collections"`
	Content     string   `json:"content,omitempty"` // the database's content hash as dumped; reload checks it
}

// dump writes the database into dir.
func (h *Handle) dump(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	colls, err := h.collections(ctx)
	if err != nil {
		return err
	}
	var m dumpManifest
	for i, c := range colls {
		if c.Type != "" && c.Type != "collection" {
			return fmt.Errorf("not restorable: %s is a %s, which a dump cannot bring back", c.Name, c.Type)
		}
		m.Collections = append(m.Collections, c.Name)
		if err := h.dumpCollection(ctx, filepath.Join(dir, fmt.Sprint(i)), c); err != nil {
			return fmt.Errorf("dump %s: %w", c.Name, err)
		}
	}
	if m.Content, err = h.contentHash(ctx); err != nil {
		return err
	}
	data, _ := json.Marshal(m)
	return os.WriteFile(filepath.Join(dir, "manifest.json"), data, 0o644)
}

func (h *Handle) dumpCollection(ctx context.Context, base string, c collInfo) error {
	if err := os.WriteFile(base+".options", c.Options, 0o644); err != nil {
		return err
	}
	specs, err := h.indexSpecs(ctx, c.Name)
	if err != nil {
		return err
	}
	var ib bytes.Buffer
	for _, s := range specs {
		raw, err := bson.Marshal(s)
		if err != nil {
			return err
		}
		ib.Write(raw)
	}
	if err := os.WriteFile(base+".indexes", ib.Bytes(), 0o644); err != nil {
		return err
	}
	f, err := os.Create(base + ".docs")
	if err != nil {
		return err
	}
	defer f.Close()
	cur, err := h.client.Database(h.db).Collection(c.Name).Find(ctx, bson.D{})
	if err != nil {
		return err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	for cur.Next(ctx) {
		if _, err := f.Write(cur.Current); err != nil {
			return err
		}
	}
	if err := cur.Err(); err != nil {
		return err
	}
	return f.Close()
}

// reload drops the database and loads the dump in dir.
func (h *Handle) reload(ctx context.Context, dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return err
	}
	var m dumpManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	db := h.client.Database(h.db)
	if err := db.Drop(ctx); err != nil {
		return err
	}
	for i, name := range m.Collections {
		if err := h.reloadCollection(ctx, filepath.Join(dir, fmt.Sprint(i)), name); err != nil {
			return fmt.Errorf("reload %s: %w", name, err)
		}
	}
	if m.Content == "" {
		return nil // a dump from before the check
	}
	// A restore is a claim the record rests on: the database must hold
	// what was dumped, not what a server that ignored an option, or a
	// client that wrote meanwhile, left.
	now, err := h.contentHash(ctx)
	if err != nil {
		return err
	}
	if now != m.Content {
		return fmt.Errorf("the restored database differs from its dump (content %s, dumped %s): another client wrote meanwhile, or the server did not store what was loaded", now[:12], m.Content[:12])
	}
	return nil
}

func (h *Handle) reloadCollection(ctx context.Context, base, name string) error {
	db := h.client.Database(h.db)
	opts, err := os.ReadFile(base + ".options")
	if err != nil {
		return err
	}
	create := bson.D{{Key: "create", Value: name}}
	if len(opts) > 0 {
		elems, err := bson.Raw(opts).Elements()
		if err != nil {
			return err
		}
		for _, e := range elems {
			create = append(create, bson.E{Key: e.Key(), Value: e.Value()})
		}
	}
	if err := db.RunCommand(ctx, create).Err(); err != nil {
		return err
	}
	if err := h.reloadIndexes(ctx, base+".indexes", name); err != nil {
		return err
	}
	return reloadDocs(ctx, db.Collection(name), base+".docs")
}

func (h *Handle) reloadIndexes(ctx context.Context, path, coll string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var specs bson.A
	for len(data) > 0 {
		raw, rest, ok := nextDoc(data)
		if !ok {
			return errors.New("malformed index dump")
		}
		if indexName(mustD(raw)) != "_id_" {
			specs = append(specs, raw)
		}
		data = rest
	}
	if len(specs) == 0 {
		return nil
	}
	return h.client.Database(h.db).RunCommand(ctx, bson.D{{Key: "createIndexes", Value: coll}, {Key: "indexes", Value: specs}}).Err()
}

func mustD(raw bson.Raw) bson.D {
	var d bson.D
	_ = bson.Unmarshal(raw, &d)
	return d
}

// nextDoc splits the first BSON document off data.
func nextDoc(data []byte) (bson.Raw, []byte, bool) {
	if len(data) < 5 {
		return nil, nil, false
	}
	n := int(uint32(data[0]) | uint32(data[1])<<8 | uint32(data[2])<<16 | uint32(data[3])<<24)
	if n < 5 || n > len(data) {
		return nil, nil, false
	}
	return bson.Raw(data[:n]), data[n:], true
}

// reloadDocs inserts the dumped documents in batches.
func reloadDocs(ctx context.Context, coll *mongo.Collection, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	const batch = 1000
	var docs []any
	flush := func() error {
		if len(docs) == 0 {
			return nil
		}
		_, err := coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(true))
		docs = docs[:0]
		return err
	}
	for len(data) > 0 {
		raw, rest, ok := nextDoc(data)
		if !ok {
			return errors.New("malformed document dump")
		}
		docs, data = append(docs, raw), rest
		if len(docs) == batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}
