package handle

import (
	"maps"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/redact"
)

// Kind is one kind of backend as the module root wires it: its builtin,
// and what the cache must know of the values and inputs it makes.
type Kind struct {
	Name     string            // backend.<Name>(...)
	Builtin  *starlark.Builtin // named "backend.<Name>" (or Name when TopLevel)
	TopLevel bool              // build(...): a name of its own, not in the backend module
	// Codecs decode the values of the kind that cells store (pg_stats,
	// plan, binary), by their Type().
	Codecs map[string]codec.DecodeFunc
	// Inputs re-check the dynamic inputs the kind records (resource,
	// image, git, binary), by input kind.
	Inputs map[string]runtime.InputChecker
}

// Module is the backend module of kinds: backend.<name> for the kinds
// that are not TopLevel, with extra members (backend.demo), the TopLevel
// kinds under their own names (build), and every kind's decoders and
// input checkers. The module root lists benchbook's kinds; a kind's own
// tests, which cannot import the root (it imports the kind), make the
// module of the kinds they use. Kinds that share an input kind (image)
// give the same checker.
func Module(kinds []Kind, extra starlark.StringDict) runtime.Module {
	members := starlark.StringDict{}
	m := runtime.Module{Name: "backend", Globals: starlark.StringDict{"backend": &starlarkstruct.Module{Name: "backend", Members: members}},
		Decoders: codec.Types{}, Inputs: map[string]runtime.InputChecker{}}
	for _, k := range kinds {
		if k.TopLevel {
			m.Globals[k.Name] = k.redacted()
		} else {
			members[k.Name] = k.redacted()
		}
		maps.Copy(m.Decoders, k.Codecs)
		maps.Copy(m.Inputs, k.Inputs)
	}
	maps.Copy(members, extra)
	return m
}

// redacted is k's builtin with its errors passed through redaction: a
// driver quotes a DSN, password and all, and a target that fails to start
// prints its environment into the output lines its error shows.
func (k Kind) redacted() *starlark.Builtin {
	return starlark.NewBuiltin(k.Builtin.Name(), func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		v, err := k.Builtin.CallInternal(th, args, kwargs) // no frame of its own: one line in a backtrace
		if err != nil {
			return nil, RedactError(err)
		}
		return v, nil
	})
}

// RedactError is err with its message redacted (runtime/redact), still
// wrapping err for errors.Is (a cancelled context stays one).
func RedactError(err error) error {
	if err == nil {
		return nil
	}
	return redactedError{msg: redact.String(err.Error()), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }
