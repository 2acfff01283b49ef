package codec

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// point is a host type stored through the registration point.
type point struct{ x, y int }

func (p *point) String() string        { return "point" }
func (p *point) Type() string          { return "codec_test.point" }
func (p *point) Freeze()               {}
func (p *point) Truth() starlark.Bool  { return true }
func (p *point) Hash() (uint32, error) { return 0, errors.New("unhashable") }
func (p *point) MarshalValue() ([]byte, error) {
	return []byte{byte(p.x), byte(p.y)}, nil
}

// types are the host types the tests decode: the point.
var types = Types{"codec_test.point": func(data []byte, _ Types) (starlark.Value, error) {
	if len(data) != 2 {
		return nil, errors.New("bad point")
	}
	return &point{int(data[0]), int(data[1])}, nil
}}

func mustEval(t *testing.T, expr string) starlark.Value {
	t.Helper()
	env := starlark.StringDict{"struct": starlark.NewBuiltin("struct", starlarkstruct.Make)}
	v, err := starlark.EvalOptions(&syntax.FileOptions{Set: true}, &starlark.Thread{}, "x", expr, env)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

func TestRoundTrip(t *testing.T) {
	for _, expr := range []string{
		"None", "True", "False", "0", "-1", "2147483648", "-9223372036854775808",
		"123456789012345678901234567890", "-123456789012345678901234567890",
		"1.5", "-0.0", "1e308", `""`, `"héllo\nworld"`, `b"\x00\xff"`,
		"[]", "[1, [2, [3]]]", "()", "(1, 'a', None)", "{}", `{"b": 1, "a": [1.5, {"k": (1,)}]}`,
		"{1: 2, (3, 4): 'x'}", "set([1, 2, 3])",
		"struct(a = 1, b = [struct(c = 'd')])",
	} {
		v := mustEval(t, expr)
		data, err := Encode(v)
		if err != nil {
			t.Fatalf("%s: encode: %v", expr, err)
		}
		back, err := Decode(data, types)
		if err != nil {
			t.Fatalf("%s: decode: %v", expr, err)
		}
		if eq, err := starlark.Equal(v, back); err != nil || !eq {
			t.Errorf("%s: round trip gave %s (%v)", expr, back, err)
		}
		if back.Type() != v.Type() {
			t.Errorf("%s: type %s, want %s", expr, back.Type(), v.Type())
		}
		again, _ := Encode(back)
		if string(again) != string(data) {
			t.Errorf("%s: encoding is not stable", expr)
		}
	}
}

func TestDictOrderKept(t *testing.T) {
	v := mustEval(t, `{"z": 1, "a": 2, "m": 3}`)
	data, _ := Encode(v)
	back, _ := Decode(data, types)
	if back.String() != `{"z": 1, "a": 2, "m": 3}` {
		t.Errorf("got %s", back)
	}
}

func TestFloatsBitExact(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.SmallestNonzeroFloat64, math.Copysign(0, -1)} {
		data, _ := Encode(starlark.Float(f))
		back, err := Decode(data, types)
		if err != nil || math.Float64bits(float64(back.(starlark.Float))) != math.Float64bits(f) {
			t.Errorf("%v: got %v, %v", f, back, err)
		}
	}
}

func TestBigIntExact(t *testing.T) {
	n, _ := new(big.Int).SetString("-987654321098765432109876543210987654321", 10)
	data, _ := Encode(starlark.MakeBigInt(n))
	back, err := Decode(data, types)
	if err != nil || back.(starlark.Int).BigInt().Cmp(n) != 0 {
		t.Fatalf("got %v, %v", back, err)
	}
}

func TestHostType(t *testing.T) {
	v := starlark.NewList([]starlark.Value{&point{3, 4}})
	data, err := Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(data, types)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := back.(*starlark.List).Index(0).(*point)
	if !ok || p.x != 3 || p.y != 4 {
		t.Errorf("got %v", back)
	}
	// The decoders are the caller's: without the point's, it is an error.
	if _, err := Decode(data, Types{}); err == nil || !strings.Contains(err.Error(), `"codec_test.point"`) {
		t.Errorf("decoding a point without its decoder: %v", err)
	}
}

func TestDecodedValuesAreFrozen(t *testing.T) {
	data, _ := Encode(mustEval(t, "[1, {'a': [2]}]"))
	back, _ := Decode(data, types)
	if err := back.(*starlark.List).Append(starlark.None); err == nil {
		t.Error("decoded list is mutable")
	}
}

func TestNotStorable(t *testing.T) {
	fn := starlark.NewBuiltin("f", nil)
	for name, v := range map[string]starlark.Value{
		"builtin":        fn,
		"nested builtin": starlark.NewList([]starlark.Value{starlark.MakeInt(1), fn}),
		"in a dict":      mustEval(t, "{'k': len}"),
		"struct ctor":    starlarkstruct.FromStringDict(fn, nil),
	} {
		if _, err := Encode(v); !errors.Is(err, ErrNotStorable) {
			t.Errorf("%s: err = %v, want ErrNotStorable", name, err)
		}
	}
	cyclic := starlark.NewList(nil)
	cyclic.Append(cyclic)
	if _, err := Encode(cyclic); !errors.Is(err, ErrNotStorable) {
		t.Errorf("cyclic list: err = %v", err)
	}
}

func TestDamagedDataIsAnError(t *testing.T) {
	data, _ := Encode(mustEval(t, `{"a": [1, 2.5, "x", struct(b = b"y")]}`))
	for i := range data {
		if _, err := Decode(data[:i], types); err == nil {
			t.Errorf("truncated at %d: no error", i)
		}
	}
	if _, err := Decode(append([]byte{99}, data[1:]...), types); err == nil {
		t.Error("unknown version: no error")
	}
	if _, err := Decode([]byte{Version, tagHost, 3, 'n', 'o', 'p', 0}, types); err == nil {
		t.Error("unregistered host type: no error")
	}
}

// FuzzDecode: no input makes Decode panic or hang.
func FuzzDecode(f *testing.F) {
	for _, expr := range []string{"None", "[1, 2]", `{"a": (1, 2.5)}`, "123456789012345678901234567890"} {
		v, _ := starlark.EvalOptions(&syntax.FileOptions{Set: true}, &starlark.Thread{}, "x", expr, nil)
		data, _ := Encode(v)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		Decode(data, types)
	})
}
