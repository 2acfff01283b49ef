// Package starbson converts between Starlark values and BSON, and
// fingerprints documents. It writes BSON documents in a canonical form for
// fingerprints.
//
// Starlark to BSON: a dict becomes a document in its insertion order (a
// sort or an index key is ordered), a list or tuple an array, an int an
// int32 when it fits else an int64, a float a double, a string a string,
// bytes binary, a bool a boolean, None null. Only dict keys that are
// strings are allowed. Two special forms let a notebook name BSON types
// Starlark lacks: {"$oid": "hex"} is an ObjectID and {"$date": ms} a
// datetime, as in MongoDB's Extended JSON.
//
// BSON to Starlark: documents become dicts (in stored order), arrays
// lists, int32/int64 ints, doubles floats, ObjectIDs and datetimes the
// same {"$oid"}/{"$date"} dicts, anything rarer its Extended JSON text.
package starbson

import (
	"fmt"
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// maxDepth bounds nesting, so a cyclic Starlark value is an error. It is
// MongoDB's own limit on a document's nesting, not limits.Depth: a deeper
// document would only be refused by the server, less clearly.
const maxDepth = 100

// Doc converts a Starlark dict to a BSON document.
func Doc(v starlark.Value) (bson.D, error) {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return nil, fmt.Errorf("want a dict (a document), got %s", v.Type())
	}
	return doc(d, 0)
}

func doc(d *starlark.Dict, depth int) (bson.D, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", maxDepth)
	}
	out := make(bson.D, 0, d.Len())
	for _, kv := range d.Items() {
		k, ok := starlark.AsString(kv[0])
		if !ok {
			return nil, fmt.Errorf("document keys must be strings, got %s", kv[0].Type())
		}
		v, err := value(kv[1], depth+1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out = append(out, bson.E{Key: k, Value: v})
	}
	return out, nil
}

// Value converts any Starlark value to a Go value the BSON encoder takes.
func Value(v starlark.Value) (any, error) { return value(v, 0) }

func value(v starlark.Value, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", maxDepth)
	}
	if x, ok := starval.Scalar(v); ok {
		return scalar(x)
	}
	switch v := v.(type) {
	case *starlark.Dict:
		return special(v, depth)
	case *starlark.List, starlark.Tuple:
		return array(v.(starlark.Indexable), depth)
	}
	return nil, fmt.Errorf("cannot convert a %s to BSON", v.Type())
}

// scalar is where BSON differs from Go: an int32 when it fits, no int past
// int64, bytes as binary.
func scalar(x any) (any, error) {
	switch x := x.(type) {
	case int64:
		if x == int64(int32(x)) {
			return int32(x), nil
		}
	case *big.Int:
		return nil, fmt.Errorf("%s does not fit in int64", x)
	case []byte:
		return bson.Binary{Data: x}, nil
	}
	return x, nil
}

func array(l starlark.Indexable, depth int) (bson.A, error) {
	out := make(bson.A, l.Len())
	for i := range out {
		x, err := value(l.Index(i), depth+1)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out[i] = x
	}
	return out, nil
}

// special reads {"$oid": hex} and {"$date": ms}; any other dict is a document.
func special(d *starlark.Dict, depth int) (any, error) {
	if d.Len() == 1 {
		kv := d.Items()[0]
		switch kv[0] {
		case starlark.String("$oid"):
			s, _ := starlark.AsString(kv[1])
			id, err := bson.ObjectIDFromHex(s)
			if err != nil {
				return nil, fmt.Errorf("$oid: %w", err)
			}
			return id, nil
		case starlark.String("$date"):
			n, ok := kv[1].(starlark.Int)
			ms, fits := n.Int64()
			if !ok || !fits {
				return nil, fmt.Errorf("$date: want milliseconds since 1970 (an int), got %s", kv[1])
			}
			return bson.DateTime(ms), nil
		}
	}
	return doc(d, depth)
}

// ToStarlark converts a BSON document to a Starlark dict.
func ToStarlark(raw bson.Raw) (*starlark.Dict, error) {
	elems, err := raw.Elements()
	if err != nil {
		return nil, err
	}
	d := starlark.NewDict(len(elems))
	for _, e := range elems {
		v, err := FromValue(e.Value())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Key(), err)
		}
		if err := d.SetKey(starlark.String(e.Key()), v); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// FromValue converts one BSON value to Starlark.
func FromValue(rv bson.RawValue) (starlark.Value, error) {
	switch rv.Type {
	case bson.TypeNull, bson.TypeUndefined:
		return starlark.None, nil
	case bson.TypeBoolean:
		return starlark.Bool(rv.Boolean()), nil
	case bson.TypeInt32:
		return starlark.MakeInt(int(rv.Int32())), nil
	case bson.TypeInt64:
		return starlark.MakeInt64(rv.Int64()), nil
	case bson.TypeDouble:
		return starlark.Float(rv.Double()), nil
	case bson.TypeString:
		return starlark.String(rv.StringValue()), nil
	case bson.TypeBinary:
		_, b := rv.Binary()
		return starlark.Bytes(b), nil
	case bson.TypeEmbeddedDocument:
		return ToStarlark(rv.Document())
	case bson.TypeArray:
		return fromArray(rv.Array())
	case bson.TypeObjectID:
		return oneKey("$oid", starlark.String(rv.ObjectID().Hex())), nil
	case bson.TypeDateTime:
		return oneKey("$date", starlark.MakeInt64(rv.DateTime())), nil
	case bson.TypeDecimal128:
		return starlark.String(rv.Decimal128().String()), nil
	}
	return starlark.String(rv.String()), nil
}

func fromArray(a bson.RawArray) (starlark.Value, error) {
	vals, err := a.Values()
	if err != nil {
		return nil, err
	}
	out := make([]starlark.Value, len(vals))
	for i, v := range vals {
		if out[i], err = FromValue(v); err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return starlark.NewList(out), nil
}

func oneKey(k string, v starlark.Value) *starlark.Dict {
	d := starlark.NewDict(1)
	_ = d.SetKey(starlark.String(k), v)
	return d
}
