package workload

import (
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/starbson"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/mongowire"
)

// mongoFields are the request keys each operation takes.
var mongoFields = map[string][]string{
	mongowire.MongoFind:      {"filter", "projection", "sort", "limit"},
	mongowire.MongoInsert:    {"documents", "document"},
	mongowire.MongoUpdate:    {"filter", "update", "upsert", "many"},
	mongowire.MongoAggregate: {"pipeline"},
	mongowire.MongoBulk:      {"writes", "ordered"},
}

// starlarkRequest converts a request dict to the op's arguments.
func starlarkRequest(op string, v starlark.Value) (*mongowire.MongoRequest, error) {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return nil, fmt.Errorf("want a dict of %s's arguments, got %s", op, v.Type())
	}
	m := make(map[string]any, d.Len())
	for _, kv := range d.Items() {
		k, ok := starlark.AsString(kv[0])
		if !ok {
			return nil, fmt.Errorf("keys must be strings, got %s", kv[0].Type())
		}
		x, err := starbson.Value(kv[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		m[k] = x
	}
	return goRequest(op, m)
}

// goRequest converts the op's arguments as Go values (from Starlark, or a
// gocode function's map) into a request; an unknown key is an error.
//
// A "tag" key names the request's tag (a generator's requests).
func goRequest(op string, m map[string]any) (*mongowire.MongoRequest, error) {
	allowed := mongoFields[op]
	var tag string
	for k, v := range m {
		if k == "tag" {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("tag must be a string, got %T", v)
			}
			tag = s
			continue
		}
		if !slices.Contains(allowed, k) {
			return nil, fmt.Errorf("%s takes %s, not %q", op, strings.Join(allowed, ", "), k)
		}
	}
	r := &mongowire.MongoRequest{Filter: m["filter"], Projection: m["projection"], Sort: m["sort"],
		Update: m["update"], Pipeline: m["pipeline"], Tag: tag}
	var err error
	if r.Limit, err = intField(m, "limit"); err != nil {
		return nil, err
	}
	for k, p := range map[string]*bool{"upsert": &r.Upsert, "many": &r.Many, "ordered": &r.Ordered} {
		if *p, err = boolField(m, k); err != nil {
			return nil, err
		}
	}
	return r, opFields(op, m, r)
}

// opFields fills and checks what each op requires.
func opFields(op string, m map[string]any, r *mongowire.MongoRequest) error {
	var err error
	switch op {
	case mongowire.MongoInsert:
		r.Documents, err = insertDocs(m)
	case mongowire.MongoUpdate:
		if r.Update == nil {
			err = fmt.Errorf("update needs update (an update document such as {\"$set\": {...}})")
		}
	case mongowire.MongoAggregate:
		if _, ok := asList(r.Pipeline); !ok {
			err = fmt.Errorf("aggregate needs pipeline (a list of stages)")
		}
	case mongowire.MongoBulk:
		r.Writes, err = bulkWrites(m["writes"])
	}
	return err
}

func insertDocs(m map[string]any) ([]any, error) {
	if d, ok := m["document"]; ok {
		return []any{d}, nil
	}
	docs, ok := asList(m["documents"])
	if !ok || len(docs) == 0 {
		return nil, fmt.Errorf("insert needs document (a dict) or documents (a non-empty list)")
	}
	return docs, nil
}

// bulkWrites reads [{"insert": doc} | {"update": {filter, update, upsert,
// many}} | {"delete": {filter, many}} | {"replace": {filter, document,
// upsert}}].
func bulkWrites(v any) ([]mongo.WriteModel, error) {
	l, ok := asList(v)
	if !ok || len(l) == 0 {
		return nil, fmt.Errorf("bulk needs writes (a non-empty list of {\"insert\": doc}, {\"update\": ...}, {\"delete\": ...}, {\"replace\": ...})")
	}
	out := make([]mongo.WriteModel, len(l))
	for i, w := range l {
		var err error
		if out[i], err = writeModel(w); err != nil {
			return nil, fmt.Errorf("writes[%d]: %w", i, err)
		}
	}
	return out, nil
}

func writeModel(w any) (mongo.WriteModel, error) {
	m, ok := asMap(w)
	if !ok || len(m) != 1 {
		return nil, fmt.Errorf("want one of {\"insert\": doc}, {\"update\": ...}, {\"delete\": ...}, {\"replace\": ...}")
	}
	for kind, arg := range m {
		if kind == "insert" {
			return mongo.NewInsertOneModel().SetDocument(arg), nil
		}
		a, ok := asMap(arg)
		if !ok {
			return nil, fmt.Errorf("%s: want a dict with filter", kind)
		}
		upsert, _ := a["upsert"].(bool)
		many, _ := a["many"].(bool)
		f := orEmptyFilter(a["filter"])
		switch {
		case kind == "update" && many:
			return mongo.NewUpdateManyModel().SetFilter(f).SetUpdate(a["update"]).SetUpsert(upsert), nil
		case kind == "update":
			return mongo.NewUpdateOneModel().SetFilter(f).SetUpdate(a["update"]).SetUpsert(upsert), nil
		case kind == "delete" && many:
			return mongo.NewDeleteManyModel().SetFilter(f), nil
		case kind == "delete":
			return mongo.NewDeleteOneModel().SetFilter(f), nil
		case kind == "replace":
			return mongo.NewReplaceOneModel().SetFilter(f).SetReplacement(a["document"]).SetUpsert(upsert), nil
		}
		return nil, fmt.Errorf("unknown write %q (insert, update, delete, replace)", kind)
	}
	return nil, nil
}

func orEmptyFilter(f any) any {
	if f == nil {
		return bson.D{}
	}
	return f
}

// asMap reads a document given as bson.D (from Starlark) or a Go map.
func asMap(v any) (map[string]any, bool) {
	switch v := v.(type) {
	case bson.D:
		m := make(map[string]any, len(v))
		for _, e := range v {
			m[e.Key] = e.Value
		}
		return m, true
	case map[string]any:
		return v, true
	case bson.M:
		return v, true
	}
	return nil, false
}

func asList(v any) ([]any, bool) {
	switch v := v.(type) {
	case bson.A:
		return v, true
	case []any:
		return v, true
	case []map[string]any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = x
		}
		return out, true
	}
	return nil, false
}

func intField(m map[string]any, k string) (int64, error) {
	switch v := m[k].(type) {
	case nil:
		return 0, nil
	case int32:
		return int64(v), nil
	case int64:
		return v, nil
	case int:
		return int64(v), nil
	}
	return 0, fmt.Errorf("%s must be an int, got %T", k, m[k])
}

func boolField(m map[string]any, k string) (bool, error) {
	switch v := m[k].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	}
	return false, fmt.Errorf("%s must be a bool, got %T", k, m[k])
}
