package export

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/starjson"
)

func jsonBuiltin(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var value starlark.Value
	indent := 2
	var name string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "value", &value, "indent?", &indent, "name?", &name); err != nil {
		return nil, err
	}
	if indent < 0 || indent > 8 {
		return nil, fmt.Errorf("%s: indent must be in 0..8, got %d", b.Name(), indent)
	}
	text, err := JSON(value, indent)
	if err != nil {
		return nil, fmt.Errorf("%s: value: %w", b.Name(), err)
	}
	return &File{Name: fileName(name, labelOf(value, "data"), ".json"), MIME: "application/json", Text: text}, nil
}

// JSON encodes a Starlark value by starjson's rule: dicts and structs keep
// their order, host values that summarize themselves (record.JSONer) give
// that summary, other host values their non-callable attributes.
func JSON(v starlark.Value, indent int) (string, error) {
	x, err := starjson.Of(v)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent > 0 {
		enc.SetIndent("", fmt.Sprintf("%*s", indent, ""))
	}
	if err := enc.Encode(x); err != nil {
		return "", err
	}
	return buf.String(), nil
}
