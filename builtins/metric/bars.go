package metric

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/internal/fmtnum"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime/codec"
)

// Bars is a block of text bars, one line per index value, labels aligned:
//
//	PG DB CPU/request   before ████████████████ 100 | after ██████████ 61
type Bars struct{ Lines []string }

func decodeBars(data []byte, _ codec.Types) (starlark.Value, error) {
	var b Bars
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&b); err != nil {
		return nil, fmt.Errorf("bars: %w", err)
	}
	return &b, nil
}

// barsBuiltin implements bars(items), items being comparisons or
// (label, index) pairs.
func barsBuiltin(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var items *starlark.List
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "items", &items); err != nil {
		return nil, err
	}
	var labels []string
	var indexes []barIndex
	for i := range items.Len() {
		label, index, err := barItem(items.Index(i))
		if err != nil {
			return nil, fmt.Errorf("bars: item %d: %w", i+1, err)
		}
		labels = append(labels, label)
		indexes = append(indexes, index)
	}
	return newBars(labels, indexes), nil
}

// barItem reads one item: a comparison's index as its record shows it, or
// a (label, index) tuple's as a table would show the number.
func barItem(v starlark.Value) (string, barIndex, error) {
	switch x := v.(type) {
	case *Comparison:
		return x.Metric, shownBar(x.Shown()), nil
	case starlark.Tuple:
		if len(x) == 2 {
			label, ok := starlark.AsString(x[0])
			index, ok2 := starlark.AsFloat(x[1])
			if ok && ok2 && !math.IsNaN(index) && !math.IsInf(index, 0) {
				return label, barIndex{index, fmtnum.Float(index)}, nil
			}
		}
	}
	return "", barIndex{}, fmt.Errorf("want a comparison or a (label, finite index) tuple, got %s", v.Type())
}

func newBars(labels []string, indexes []barIndex) *Bars {
	width := 0
	for _, l := range labels {
		width = max(width, utf8.RuneCountInString(l))
	}
	b := &Bars{}
	for i, l := range labels {
		pad := strings.Repeat(" ", width-utf8.RuneCountInString(l))
		b.Lines = append(b.Lines, l+pad+" "+BarLine(indexes[i]))
	}
	return b
}

func (b *Bars) String() string        { return strings.Join(b.Lines, "\n") }
func (b *Bars) Type() string          { return "bars" }
func (b *Bars) Freeze()               {}
func (b *Bars) Truth() starlark.Bool  { return len(b.Lines) > 0 }
func (b *Bars) Hash() (uint32, error) { return starlark.String(b.String()).Hash() }
func (b *Bars) Markdown() string      { return "```text\n" + b.String() + "\n```\n" }
func (b *Bars) HTML() string          { return `<pre class="bars">` + html.EscapeString(b.String()) + "</pre>" }
func (b *Bars) JSON() any             { return b.Lines }

// CompareSameType: bars are equal when their lines are (so Hash, of the
// lines, agrees).
func (b *Bars) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	return starval.EqualOnly(op, slices.Equal(b.Lines, y.(*Bars).Lines), b, y)
}

// MarshalValue stores the lines.
func (b *Bars) MarshalValue() ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(b); err != nil {
		return nil, fmt.Errorf("bars: %w", err)
	}
	return buf.Bytes(), nil
}
