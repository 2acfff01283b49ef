package runtime

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// A parameter given its default (-p pairs=6 where the notebook says
// param("pairs", 6)) is the run without it: the same key, the same
// entries, so render -p pairs=6 after a run without -p finds every cell
// (issue 52: it marked every cell "never"). Keys are made before anything
// runs, so the default must be known from the source: a literal (a
// number, a string, True or False) that every param call of the name in
// the notebook's cells gives alike. A name with another default, or one
// that is not a literal, keeps the old rule (set is set).

// literalParam is the one literal default of a parameter in the cells.
type literalParam struct {
	value starlark.Value // nil: the calls disagree, or one is not a literal
	cell  string         // a cell that gives it, for the error below
}

// paramDefaults gathers the literal defaults of nb's param calls.
func paramDefaults(nb *Notebook) map[string]literalParam {
	out := map[string]literalParam{}
	for _, c := range nb.Cells {
		for name, v := range c.paramDefs {
			d, seen := out[name]
			switch {
			case !seen:
				out[name] = literalParam{value: v, cell: c.Name}
			case d.value == nil:
			case v == nil:
				out[name] = literalParam{}
			default:
				if eq, err := starlark.Equal(d.value, v); err != nil || !eq {
					out[name] = literalParam{}
				}
			}
		}
	}
	return out
}

// paramValue is how parameter name enters keys and input hashes: "default"
// when it is not set or set to its literal default, else its salted hash.
func (s *Session) paramValue(name string) string {
	raw, ok := s.Params[name]
	if !ok {
		return "default"
	}
	if d := s.defaults[name]; d.value != nil && !strings.HasPrefix(raw, withheldParam) {
		if v, err := typedLike(d.value, raw); err == nil {
			if eq, err := starlark.Equal(v, d.value); err == nil && eq {
				return "default"
			}
		}
	}
	return s.paramHash(raw)
}

// checkDefault refuses a param call whose default differs from the one
// the cells give the name: -p NAME=<the cells' default> is keyed as the
// run without it, which would be wrong for this call (a loaded module's).
func (s *Session) checkDefault(name string, def starlark.Value) error {
	d := s.defaults[name]
	if d.value == nil {
		return nil
	}
	if eq, err := starlark.Equal(def, d.value); err == nil && eq {
		return nil
	}
	return fmt.Errorf("param: %s has the default %s here and %s in cell %s: give it one default (-p %s=... sets every one)",
		name, def, d.value, d.cell, name)
}

// literalDefault is the default of a param(NAME, DEFAULT) call when it is
// a literal, else nil.
func literalDefault(call *syntax.CallExpr) starlark.Value {
	return literalValue(defaultArg(call), false)
}

func literalValue(e syntax.Expr, negate bool) starlark.Value {
	switch x := e.(type) {
	case *syntax.Literal:
		switch v := x.Value.(type) {
		case int64:
			if negate {
				v = -v
			}
			return starlark.MakeInt64(v)
		case float64:
			if negate {
				v = -v
			}
			return starlark.Float(v)
		case string:
			if !negate && x.Token == syntax.STRING {
				return starlark.String(v)
			}
		}
	case *syntax.Ident:
		if !negate && (x.Name == "True" || x.Name == "False") {
			return starlark.Bool(x.Name == "True")
		}
	case *syntax.UnaryExpr:
		if x.Op == syntax.MINUS && !negate {
			return literalValue(x.X, true)
		}
	case *syntax.ParenExpr:
		return literalValue(x.X, negate)
	}
	return nil
}
