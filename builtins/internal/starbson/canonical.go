package starbson

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash"
	"math"
	"sort"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Canonical writes doc to w in a form that two equal documents share:
// fields sorted by name at every level (field order is how a client built
// the document, not what it holds), numbers by value whatever their BSON
// type (int32 7, int64 7 and double 7.0 are one number, as MongoDB
// compares them), every string and byte string length-prefixed so no two
// documents write the same bytes. Arrays keep their order.
func Canonical(w hash.Hash, doc bson.Raw) error {
	return canonDoc(w, doc, 0)
}

func canonDoc(w hash.Hash, doc bson.Raw, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("nested more than %d levels deep", maxDepth)
	}
	elems, err := doc.Elements()
	if err != nil {
		return err
	}
	sort.SliceStable(elems, func(i, j int) bool { return elems[i].Key() < elems[j].Key() })
	tag(w, 'D', len(elems))
	for _, e := range elems {
		str(w, e.Key())
		if err := canonValue(w, e.Value(), depth+1); err != nil {
			return err
		}
	}
	return nil
}

func canonValue(w hash.Hash, rv bson.RawValue, depth int) error {
	switch rv.Type {
	case bson.TypeEmbeddedDocument:
		return canonDoc(w, rv.Document(), depth)
	case bson.TypeArray:
		vals, err := rv.Array().Values()
		if err != nil {
			return err
		}
		tag(w, 'A', len(vals))
		for _, v := range vals {
			if err := canonValue(w, v, depth+1); err != nil {
				return err
			}
		}
		return nil
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
		number(w, rv)
	case bson.TypeString:
		w.Write([]byte{'S'})
		str(w, rv.StringValue())
	case bson.TypeNull, bson.TypeUndefined:
		w.Write([]byte{'Z'})
	case bson.TypeBoolean:
		w.Write([]byte{'b', btoi(rv.Boolean())})
	default: // the type and its bytes: ObjectIDs, dates, binary, decimals...
		tag(w, byte(rv.Type), len(rv.Value))
		w.Write(rv.Value)
	}
	return nil
}

// number writes an integral value as an integer, anything else as a float.
func number(w hash.Hash, rv bson.RawValue) {
	if n, ok := rv.AsInt64OK(); ok && rv.Type != bson.TypeDouble {
		w.Write([]byte("N" + strconv.FormatInt(n, 10) + ";"))
		return
	}
	f := rv.Double()
	if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		w.Write([]byte("N" + strconv.FormatInt(int64(f), 10) + ";"))
		return
	}
	w.Write([]byte("F" + strconv.FormatFloat(f, 'g', -1, 64) + ";"))
}

func tag(w hash.Hash, t byte, n int) {
	var b bytes.Buffer
	b.WriteByte(t)
	binary.Write(&b, binary.BigEndian, uint32(n))
	w.Write(b.Bytes())
}

func str(w hash.Hash, s string) {
	tag(w, 's', len(s))
	w.Write([]byte(s))
}

func btoi(b bool) byte {
	if b {
		return 1
	}
	return 0
}
