package runtime

import (
	"maps"
	"sync"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/record"
)

// What packages not yet turned into a Module register from init: every
// ModuleSet adds it after its modules. It goes with the last of them.

var (
	legacyMu sync.Mutex
	legacy   = Module{Name: "init", Globals: starlark.StringDict{}, Inputs: map[string]InputChecker{}}
)

// Predeclare adds v to the legacy module.
func Predeclare(name string, v starlark.Value) {
	legacyMu.Lock()
	defer legacyMu.Unlock()
	legacy.Globals[name] = v
}

// Predeclared returns the globals of Core and the legacy module.
func Predeclared() starlark.StringDict { return MustModuleSet(nil).Globals() }

// RegisterInputKind adds an input checker to the legacy module.
func RegisterInputKind(kind string, check InputChecker) {
	legacyMu.Lock()
	defer legacyMu.Unlock()
	legacy.Inputs[kind] = check
}

// RegisterRecordPass adds a record pass to the legacy module.
func RegisterRecordPass(p func(*record.Record)) {
	legacyMu.Lock()
	defer legacyMu.Unlock()
	legacy.Pass = p
}

// KeepNamed adds a kept type to the legacy module.
func KeepNamed(typ string) {
	legacyMu.Lock()
	defer legacyMu.Unlock()
	legacy.Named = append(legacy.Named, typ)
}

func legacyModule() Module {
	legacyMu.Lock()
	defer legacyMu.Unlock()
	m := legacy
	m.Globals, m.Inputs = maps.Clone(m.Globals), maps.Clone(m.Inputs)
	m.Decoders = codec.Registered()
	return m
}
