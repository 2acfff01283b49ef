package starbson

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

func eval(t *testing.T, expr string) starlark.Value {
	t.Helper()
	v, err := starlark.EvalOptions(&syntax.FileOptions{}, &starlark.Thread{}, "x", expr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A document goes to BSON and back unchanged, field order included.
func TestRoundTrip(t *testing.T) {
	src := `{"b": 1, "a": [1, 2.5, "x", None, True, b"\x00\x01"], "big": 1 << 40, "n": {"z": {"$oid": "0123456789abcdef01234567"}, "d": {"$date": 1700000000000}}}`
	d, err := Doc(eval(t, src))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ToStarlark(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.String(); got != eval(t, src).String() {
		t.Errorf("round trip:\n got %s\nwant %s", got, eval(t, src))
	}
	if _, err := Doc(eval(t, `{1: 2}`)); err == nil {
		t.Error("an int key was accepted")
	}
	if _, err := Doc(eval(t, `{"a": {"$oid": "nothex"}}`)); err == nil {
		t.Error("a malformed $oid was accepted")
	}
	if _, err := Doc(eval(t, `{"a": [1 << 70]}`)); err == nil || !strings.Contains(err.Error(), "a: [0]: 1180591620717411303424 does not fit in int64") {
		t.Errorf("an int past int64: %v", err)
	}
}

func canon(t *testing.T, d bson.D) string {
	t.Helper()
	raw, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if err := Canonical(h, raw); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Equal documents share a canonical form whatever their field order and
// number types; a change anywhere, or a value moved between fields, does not.
func TestCanonical(t *testing.T) {
	base := canon(t, bson.D{{Key: "a", Value: int32(7)}, {Key: "b", Value: bson.D{{Key: "x", Value: "s"}, {Key: "y", Value: 2.5}}}})
	same := []bson.D{
		{{Key: "b", Value: bson.D{{Key: "y", Value: 2.5}, {Key: "x", Value: "s"}}}, {Key: "a", Value: int64(7)}},
		{{Key: "a", Value: 7.0}, {Key: "b", Value: bson.D{{Key: "x", Value: "s"}, {Key: "y", Value: 2.5}}}},
	}
	for i, d := range same {
		if got := canon(t, d); got != base {
			t.Errorf("same[%d] has another canonical form", i)
		}
	}
	other := []bson.D{
		{{Key: "a", Value: int32(8)}, {Key: "b", Value: bson.D{{Key: "x", Value: "s"}, {Key: "y", Value: 2.5}}}},
		{{Key: "a", Value: "7"}, {Key: "b", Value: bson.D{{Key: "x", Value: "s"}, {Key: "y", Value: 2.5}}}},
		{{Key: "a", Value: int32(7)}, {Key: "b", Value: bson.D{{Key: "x", Value: "s"}, {Key: "y", Value: 2.6}}}},
		{{Key: "a", Value: int32(7)}, {Key: "b", Value: bson.D{{Key: "xs", Value: ""}, {Key: "y", Value: 2.5}}}},
		{{Key: "a", Value: int32(7)}, {Key: "b", Value: bson.A{"s", 2.5}}},
		{{Key: "a", Value: int32(7)}},
	}
	for i, d := range other {
		if canon(t, d) == base {
			t.Errorf("other[%d] shares the canonical form", i)
		}
	}
	if canon(t, bson.D{{Key: "a", Value: bson.A{1, 2}}}) == canon(t, bson.D{{Key: "a", Value: bson.A{2, 1}}}) {
		t.Error("array order was ignored")
	}
}
