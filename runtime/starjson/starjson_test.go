package starjson

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime/limits"
)

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A big int stays a number with every digit: read back by encoding/json's
// own decoder (UseNumber) and math/big, it is the int that went in.
func TestBigIntIsAnExactNumber(t *testing.T) {
	for _, s := range []string{"12345678901234567890123", "-98765432109876543210", "9223372036854775807", "9223372036854775808"} {
		n, _ := new(big.Int).SetString(s, 10)
		x, err := Of(starlark.MakeBigInt(n))
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(strings.NewReader(encode(t, []any{x})))
		dec.UseNumber()
		var back []any
		if err := dec.Decode(&back); err != nil {
			t.Fatal(err)
		}
		num, ok := back[0].(json.Number)
		if got, _ := new(big.Int).SetString(string(num), 10); !ok || got == nil || got.Cmp(n) != 0 {
			t.Errorf("%s came back as %#v", s, back[0])
		}
	}
}

func TestOrderNaNAndText(t *testing.T) {
	d := starlark.NewDict(3)
	_ = d.SetKey(starlark.String("z"), starlark.Float(math.NaN()))
	_ = d.SetKey(starlark.MakeInt(2), starlark.Float(math.Inf(-1)))
	_ = d.SetKey(starlark.String("a"), starlark.Tuple{starlark.Bytes("<b>"), starlark.None, starlark.True})
	x, err := Data(d)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := encode(t, x), `{"z":null,"2":null,"a":["<b>",null,true]}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

type host struct{ starlark.Value }

func (host) AttrNames() []string { return []string{"n", "stop"} }
func (host) Attr(name string) (starlark.Value, error) {
	if name == "n" {
		return starlark.MakeInt(3), nil
	}
	return starlark.NewBuiltin("stop", nil), nil
}
func (host) Type() string { return "handle" }

// Of reaches into host values by their data attributes; Data refuses them,
// so a record never shows more of a handle than its text. A struct is data
// to both.
func TestHostValues(t *testing.T) {
	h := host{starlark.None}
	x, err := Of(h)
	if err != nil || encode(t, x) != `{"n":3}` {
		t.Errorf("Of(host) = %s, %v", encode(t, x), err)
	}
	if _, err := Data(starlark.NewList([]starlark.Value{h})); err == nil || !strings.Contains(err.Error(), "handle") {
		t.Errorf("Data(host) = %v, want an error naming the type", err)
	}
	s := starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{"k": starlark.String("v")})
	if x, err := Data(s); err != nil || encode(t, x) != `{"k":"v"}` {
		t.Errorf("Data(struct) = %v, %v", x, err)
	}
	if _, err := Of(starlark.NewBuiltin("len", nil)); err == nil || !strings.Contains(err.Error(), "cannot encode a function (len)") {
		t.Errorf("a function: %v", err)
	}
}

// A list that holds itself is a cycle: an error at limits.Depth, not a
// stack overflow.
func TestCycleIsTooDeep(t *testing.T) {
	t.Setenv(limits.Depth.Env, "50")
	l := starlark.NewList(nil)
	_ = l.Append(l)
	if _, err := Of(l); !errors.Is(err, limits.ErrTooDeep) {
		t.Errorf("a cycle: %v", err)
	}
	deep := starlark.Value(starlark.None)
	for range 50 {
		deep = starlark.NewList([]starlark.Value{deep})
	}
	if _, err := Of(deep); err != nil {
		t.Errorf("50 levels under a limit of 50: %v", err)
	}
}
