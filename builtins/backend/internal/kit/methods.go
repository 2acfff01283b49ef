package kit

import (
	"sort"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/handle"
)

// Methods maps the Starlark method names of a handle (a cluster, a process,
// a container, a Mongo database) to their implementations; name is the
// method's full name for errors ("postgres.exec").
type Methods[H any] map[string]func(h H, th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)

// Bind is h's method name as a builtin called kind.name, or nil (no such
// attribute). Its errors pass through redaction: a driver may quote a DSN
// or a URI, password and all.
func (ms Methods[H]) Bind(h H, kind, name string) starlark.Value {
	m, ok := ms[name]
	if !ok {
		return nil
	}
	full := kind + "." + name
	return starlark.NewBuiltin(full, func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		v, err := m(h, th, full, args, kwargs)
		if err != nil {
			return nil, handle.RedactError(err)
		}
		return v, nil
	})
}

// Names is fields plus the method names, sorted: a handle's AttrNames.
func (ms Methods[H]) Names(fields ...string) []string {
	names := append([]string(nil), fields...)
	for k := range ms {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
