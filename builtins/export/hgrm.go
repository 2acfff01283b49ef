package export

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/hgrm"
)

// hdrer is a run or a histogram: latency values in microseconds.
type hdrer interface {
	Hdr() *hdrhistogram.Histogram
}

func hgrmBuiltin(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var run starlark.Value
	ticks := 5
	var name string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "run", &run, "ticks?", &ticks, "name?", &name); err != nil {
		return nil, err
	}
	h, ok := run.(hdrer)
	if !ok {
		return nil, fmt.Errorf("%s: run: want a run or a histogram, got %s", b.Name(), run.Type())
	}
	if ticks < 1 || ticks > 100 {
		return nil, fmt.Errorf("%s: ticks must be in 1..100, got %d", b.Name(), ticks)
	}
	text := hgrm.Text(h.Hdr(), hgrm.Options{TicksPerHalf: int32(ticks), Scale: 1000})
	return &File{Name: fileName(name, labelOf(run, "latency"), ".hgrm"), MIME: "text/plain", Text: text}, nil
}

// labelOf is v.label, else fallback.
func labelOf(v starlark.Value, fallback string) string {
	if ha, ok := v.(starlark.HasAttrs); ok {
		if x, err := ha.Attr("label"); err == nil && x != nil {
			if s, ok := starlark.AsString(x); ok && s != "" {
				return s
			}
		}
	}
	return fallback
}
