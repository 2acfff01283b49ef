package runtime

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/limits"
	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

func nestedList(depth int) starlark.Value {
	var v starlark.Value = starlark.NewList(nil)
	for range depth {
		v = starlark.NewList([]starlark.Value{v})
	}
	return v
}

// TestCheckValue: depth and size are bounded without recursion (six
// million levels are refused: recursion would overflow Go's stack), a
// cycle is found as depth, and the variables raise the limits.
func TestCheckValue(t *testing.T) {
	if err := checkValue(nestedList(6_000_000)); !errors.Is(err, limits.ErrTooDeep) || !strings.Contains(err.Error(), limits.Depth.Env) {
		t.Fatalf("6M deep: %v", err)
	}
	if err := checkValue(nestedList(999)); err != nil {
		t.Errorf("999 deep: %v", err)
	}
	t.Setenv(limits.Depth.Env, "5000")
	if err := checkValue(nestedList(4000)); err != nil {
		t.Errorf("4000 deep with the limit raised: %v", err)
	}
	cyc := starlark.NewList(nil)
	cyc.Append(cyc)
	if err := checkValue(cyc); !errors.Is(err, limits.ErrTooDeep) {
		t.Errorf("cycle: %v", err)
	}
	t.Setenv(limits.Value.Env, "1M")
	big := starlark.String(strings.Repeat("x", 2<<20))
	if err := checkValue(starlark.Tuple{big}); !errors.Is(err, limits.ErrTooLarge) || !strings.Contains(err.Error(), limits.Value.Env) {
		t.Errorf("2 MB string under a 1M limit: %v", err)
	}
}

// TestCheckValueLinear: the check costs time linear in the value: six
// million levels are refused in well under a second (10 s leaves room for
// a busy box; under -race and load it took 11 s).
func TestCheckValueLinear(t *testing.T) {
	timing.Only(t, "timed: -race makes building and walking the value several times slower")
	v := nestedList(6_000_000)
	start := time.Now()
	if err := checkValue(v); !errors.Is(err, limits.ErrTooDeep) {
		t.Fatalf("6M deep: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("6M deep took %v", d)
	}
}
