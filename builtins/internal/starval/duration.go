package starval

import (
	"fmt"
	"math"
	"time"

	"go.starlark.net/starlark"
)

// Duration is a span of time given to a builtin: a string that Go's
// time.ParseDuration reads ("30s", "500ms", "1m30s") or a number of seconds
// (5, 0.25). It implements starlark.Unpacker, as go.starlark.net's lib/time
// Duration does, so UnpackArgs(..., "timeout?", &d) parses it and every
// builtin accepts the same spellings and refuses them in the same words:
// "host.gate: for parameter wait: ...". A negative span is refused: no
// builtin has a use for one, and a typo should not mean "at once".
type Duration time.Duration

// PositiveDuration is a Duration that must be > 0: a timeout, a window, a
// poll interval, where zero would mean "never" or "spin".
type PositiveDuration time.Duration

// maxSeconds bounds a number of seconds well inside time.Duration's range
// (292 years), so a typo such as 1e300 is refused instead of wrapping.
const maxSeconds = 1e9

// Unpack reads v as a Duration (see the type's comment).
func (d *Duration) Unpack(v starlark.Value) error {
	x, err := parseDuration(v)
	if err != nil {
		return err
	}
	*d = Duration(x)
	return nil
}

// Unpack reads v as a Duration that must be > 0.
func (d *PositiveDuration) Unpack(v starlark.Value) error {
	x, err := parseDuration(v)
	if err != nil {
		return err
	}
	if x == 0 {
		return fmt.Errorf("must be > 0, got %s", v)
	}
	*d = PositiveDuration(x)
	return nil
}

// parseDuration is the one parser of durations for every builtin.
func parseDuration(v starlark.Value) (time.Duration, error) {
	d, err := spanOf(v)
	if err == nil && d < 0 {
		err = fmt.Errorf("must not be negative, got %s", v)
	}
	return d, err
}

func spanOf(v starlark.Value) (time.Duration, error) {
	switch v := v.(type) {
	case starlark.String:
		d, err := time.ParseDuration(string(v))
		if err != nil {
			return 0, fmt.Errorf("malformed duration %s (want e.g. \"30s\", \"500ms\" or a number of seconds)", v)
		}
		return d, nil
	case starlark.Int, starlark.Float:
		f, _ := starlark.AsFloat(v)
		if math.IsNaN(f) || math.Abs(f) > maxSeconds {
			return 0, fmt.Errorf("%s seconds is out of range", v)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	return 0, fmt.Errorf("got %s, want a duration such as \"30s\" or a number of seconds", v.Type())
}
