package runtime

import (
	_ "embed"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sync"

	starlarkmath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/record"
)

// A Module is one builtin module as the host hands it to the engine
// (Options.Modules): the names it predeclares, and what the engine must
// know of the values and inputs its builtins make. The engine knows no
// builtin module: cmd/benchbook lists them by hand (modules.go), as
// go.starlark.net's cmd/starlark predeclares its own, and a test lists the
// ones it needs.
type Module struct {
	Name string // for errors: "metric"
	// Globals are predeclared in every cell and in every module a cell
	// loads (@std/abab.star).
	Globals starlark.StringDict
	// Decoders rebuild the host values its builtins make, by Type(), when
	// a cell's values come back from the cache.
	Decoders codec.Types
	// Inputs re-check the inputs its builtins record (AddInput), by
	// Input.Kind; a kind with no checker is trusted as recorded.
	Inputs map[string]InputChecker
	// Named are value types the record keeps every global of, shown or
	// not (Record.Named): tools read them back from a JSON record (run
	// -baseline gates every comparison), and Pass sees them.
	Named []string
	// Pass, when set, looks at the whole record before it is rendered or
	// gated (recordpass.go).
	Pass func(*record.Record)
	// Docs is the module's reference, Markdown in the shape package
	// refdoc reads: an entry per builtin with its signature, arguments,
	// returns, errors and an example. Each builtins package embeds it
	// (its reference.md), so the docs travel with the module: benchbook
	// help, the REPL's :help, the kernel's inspect and docs/reference all
	// read this one text.
	Docs string
}

// A ModuleSet is the modules of one engine or session merged: what its
// notebooks see, the stdlib they load with "@std/", and the decoders,
// input checkers and record passes of the modules. It is read-only once
// made, so sessions may share one.
type ModuleSet struct {
	globals  starlark.StringDict
	stdlib   fs.FS
	decoders codec.Types
	inputs   map[string]InputChecker
	named    map[string]bool
	passes   []func(*record.Record)
}

// NewModuleSet merges the engine's own module (Core) and mods, in order,
// with stdlib as "@std/" (nil: no stdlib). A global, a decoder's type or
// an input kind that two modules give is an error naming both.
func NewModuleSet(stdlib fs.FS, mods ...Module) (*ModuleSet, error) {
	m := &ModuleSet{globals: starlark.StringDict{}, stdlib: stdlib, decoders: codec.Types{},
		inputs: map[string]InputChecker{}, named: map[string]bool{}}
	from := map[string]string{} // "global x" -> the module that gave it
	for _, mod := range append([]Module{Core()}, mods...) {
		if err := m.add(mod, from); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *ModuleSet) add(mod Module, from map[string]string) error {
	claim := func(what, name string) error {
		if other, dup := from[what+" "+name]; dup {
			return fmt.Errorf("modules %s and %s both give the %s %q", other, mod.Name, what, name)
		}
		from[what+" "+name] = mod.Name
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(mod.Globals)) {
		if err := claim("global", name); err != nil {
			return err
		}
		m.globals[name] = mod.Globals[name]
	}
	for _, typ := range slices.Sorted(maps.Keys(mod.Decoders)) {
		if err := claim("value type", typ); err != nil {
			return err
		}
		m.decoders[typ] = mod.Decoders[typ]
	}
	for _, kind := range slices.Sorted(maps.Keys(mod.Inputs)) {
		if err := claim("input kind", kind); err != nil {
			return err
		}
		m.inputs[kind] = mod.Inputs[kind]
	}
	for _, typ := range mod.Named {
		m.named[typ] = true
	}
	if mod.Pass != nil {
		m.passes = append(m.passes, mod.Pass)
	}
	return nil
}

// MustModuleSet is NewModuleSet for a fixed list (a test's, a benchmark's),
// where a clash is a bug: it panics.
func MustModuleSet(stdlib fs.FS, mods ...Module) *ModuleSet {
	m, err := NewModuleSet(stdlib, mods...)
	if err != nil {
		panic(err)
	}
	return m
}

// coreOnly is the ModuleSet of a session given none.
var coreOnly = sync.OnceValue(func() *ModuleSet { return MustModuleSet(nil) })

// modules is the session's ModuleSet, or Core alone.
func (s *Session) modules() *ModuleSet {
	if s.Modules != nil {
		return s.Modules
	}
	return coreOnly()
}

// Globals returns a copy of what notebooks see.
func (m *ModuleSet) Globals() starlark.StringDict { return maps.Clone(m.globals) }

// Decoders are the modules' decoders, for codec.Decode.
func (m *ModuleSet) Decoders() codec.Types { return m.decoders }

// Core is the engine's own module, in every ModuleSet: the builtins whose
// meaning the engine gives (param, file, memo, progress, resources) and
// go.starlark.net's struct, json and math:
//
//	param(name, default)  -> the value of -p name=value, typed like default
//	file(path)            -> the file's text; path is relative to the notebook
//	                         and the file becomes an input of the cell
//	memo(key, fn)         -> fn() computed once per cell and key, stored
//	                         the moment it returns (checkpoints)
//	progress(label)       -> names the experiment's step (step.go)
//	resources             -> mark() and reset(mark) (resources.go)
//	struct(**fields)      -> a storable record of named fields
//	json, math            -> go.starlark.net's json and math modules, json's
//	                         encode and decode bounded by limits.Depth
//	str(x)                -> Starlark's str; a value nested past
//	                         BENCHBOOK_MAX_DEPTH is an error (guards.go)
//	repr(x)               -> Starlark's repr; the same bound
//	print(*args, sep=" ") -> Starlark's print; the same bound
func Core() Module {
	globals := starlark.StringDict{
		"struct":    starlark.NewBuiltin("struct", starlarkstruct.Make),
		"json":      jsonModule,
		"math":      starlarkmath.Module,
		"param":     starlark.NewBuiltin("param", param),
		"file":      starlark.NewBuiltin("file", file),
		"memo":      starlark.NewBuiltin("memo", memo),
		"progress":  progressBuiltin,
		"resources": resourcesModule,
	}
	maps.Copy(globals, guardedUniversal)
	return Module{
		Name:     "runtime",
		Globals:  globals,
		Decoders: codec.Types{"printed": func(data []byte, _ codec.Types) (starlark.Value, error) { return Printed(data), nil }},
		Inputs:   map[string]InputChecker{"file": fileHash, "file-stat": fileStat, "program": programPath},
		Docs:     coreDocs,
	}
}

// coreDocs is the reference of Core's builtins.
//
//go:embed reference.md
var coreDocs string
