package starval

import (
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
)

// What users write today keeps working: Go duration strings and numbers of
// seconds, through UnpackArgs as the builtins call it.
func TestDurationAccepts(t *testing.T) {
	for src, want := range map[string]time.Duration{
		`"3s"`: 3 * time.Second, `"500ms"`: 500 * time.Millisecond, `"1m30s"`: 90 * time.Second,
		`5`: 5 * time.Second, `0.25`: 250 * time.Millisecond, `"0s"`: 0, `0`: 0,
	} {
		var d Duration
		if err := unpack(t, src, "d", &d); err != nil || time.Duration(d) != want {
			t.Errorf("Duration %s = %s, %v; want %s", src, time.Duration(d), err, want)
		}
		if want == 0 {
			continue
		}
		var p PositiveDuration
		if err := unpack(t, src, "p", &p); err != nil || time.Duration(p) != want {
			t.Errorf("PositiveDuration %s = %s, %v; want %s", src, time.Duration(p), err, want)
		}
	}
}

func TestDurationRefuses(t *testing.T) {
	for src, want := range map[string]string{
		`"1x"`: "malformed duration", `"-1s"`: "must not be negative", `-0.5`: "must not be negative",
		`float("inf")`: "out of range", `None`: "got NoneType, want a duration",
	} {
		var d Duration
		err := unpack(t, src, "d", &d)
		if err == nil || !strings.HasPrefix(err.Error(), `f: for parameter "d": `) || !strings.Contains(err.Error(), want) {
			t.Errorf("Duration %s: got %v, want %q", src, err, want)
		}
	}
	for _, src := range []string{`0`, `"0s"`, `"0"`} {
		var p PositiveDuration
		if err := unpack(t, src, "p", &p); err == nil || !strings.Contains(err.Error(), "must be > 0, got "+src) {
			t.Errorf("PositiveDuration %s: got %v, want must be > 0", src, err)
		}
	}
}

// unpack evaluates src and passes it to UnpackArgs as keyword name.
func unpack(t *testing.T, src, name string, ptr starlark.Unpacker) error {
	t.Helper()
	v, err := starlark.Eval(&starlark.Thread{}, "t.star", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	kw := []starlark.Tuple{{starlark.String(name), v}}
	return starlark.UnpackArgs("f", nil, kw, name+"?", ptr)
}
