package gocode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/printer"
	"go/scanner"
	"go/token"
	"io"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/traefik/yaegi/interp"
	"github.com/traefik/yaegi/stdlib"
	"go.starlark.net/starlark"
)

// source is one Go file to interpret, parsed once by go/parser for the
// checks yaegi does not do well.
type source struct {
	name  string // as the notebook wrote it: errors say "gen.go:12"
	text  string
	lines int
	fset  *token.FileSet
	file  *ast.File
	pkg   string
}

func parseSource(name string, text []byte) (*source, error) {
	src := &source{name: name, text: string(text), lines: bytes.Count(text, []byte("\n")) + 1, fset: token.NewFileSet()}
	f, err := parser.ParseFile(src.fset, name, text, parser.SkipObjectResolution)
	if err != nil {
		var list scanner.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			p := list[0].Pos
			return nil, &Error{File: name, Line: p.Line, Col: p.Column, Msg: list[0].Msg}
		}
		return nil, &Error{File: name, Msg: err.Error()}
	}
	src.file, src.pkg = f, f.Name.Name
	if src.pkg == "main" {
		return nil, &Error{File: name, Line: src.fset.Position(f.Name.Pos()).Line,
			Msg: "package main cannot be loaded", Hint: "give the file its own package name, e.g. `package gen`"}
	}
	return src, nil
}

// Package is the value of gocode.file: the exported functions (and
// constants) of one interpreted Go file.
type Package struct {
	src   *source
	path  string // resolved path of the file
	hash  string // sha256 of its contents, hex
	attrs map[string]starlark.Value
	names []string    // snake_case names, sorted, for dir()
	funcs []*Func     // sorted by Go name
	mu    *sync.Mutex // serializes calls; nil when loaded with concurrent = True
	trace *traceLog

	interp  *interp.Interpreter
	ran     chan struct{} // the stopper started: see interrupt.go
	stopMu  sync.Mutex
	release chan struct{} // closed once the current interrupt's bump is done
}

var (
	_ starlark.HasAttrs = (*Package)(nil)
)

func (m *Package) String() string {
	return fmt.Sprintf("<gocode.module %s (%s)>", m.src.name, strings.Join(m.names, ", "))
}
func (m *Package) Type() string         { return "gocode.module" }
func (m *Package) Freeze()              {}
func (m *Package) Truth() starlark.Bool { return true }
func (m *Package) Hash() (uint32, error) {
	return 0, fmt.Errorf("unhashable type: gocode.module")
}

// Attr returns a function or constant by its snake_case or its Go name.
func (m *Package) Attr(name string) (starlark.Value, error) { return m.attrs[name], nil }

// AttrNames lists the snake_case names.
func (m *Package) AttrNames() []string { return m.names }

// Name is the module's short name: the file name without ".go".
func (m *Package) Name() string {
	base := m.src.name[strings.LastIndex(m.src.name, "/")+1:]
	return strings.TrimSuffix(base, ".go")
}

// loadOptions are the keyword arguments of gocode.file.
type loadOptions struct {
	concurrent bool      // callers guard their own state; no mutex around calls
	stdout     io.Writer // where the interpreted code's prints go
}

// compile interprets src: preflight checks, yaegi's compiler, then package
// initialization under ctx, so a stuck init is cancelled with the cell.
func compile(ctx context.Context, src *source, opts loadOptions) (*Package, error) {
	if e := preflight(src); e != nil {
		return nil, e
	}
	m := &Package{src: src, trace: &traceLog{}, attrs: map[string]starlark.Value{}}
	if !opts.concurrent {
		m.mu = &sync.Mutex{}
	}
	i := interp.New(interp.Options{Stdout: opts.stdout, Stderr: m.trace, Env: []string{}, Args: []string{src.name}})
	m.interp = i
	if err := i.Use(stdlib.Symbols); err != nil {
		return nil, fmt.Errorf("gocode: standard library: %w", err)
	}
	// EvalWithContext, not Compile + ExecuteWithContext: the latter writes
	// its named results from its goroutine after a cancellation (a data race
	// in yaegi v0.16.1).
	if _, err := i.EvalWithContext(ctx, src.text); err != nil {
		return nil, evalFault(ctx, src, err, m.trace.take())
	}
	if err := m.collect(i.Symbols(src.pkg)[src.pkg]); err != nil {
		return nil, err
	}
	if err := m.installStopper(); err != nil {
		return nil, err
	}
	return m, nil
}

// evalFault explains why evaluating the file failed: interrupted, a panic
// of its initialization (yaegi traced the frames), a panic of yaegi's
// compiler (no trace), or a compile error.
func evalFault(ctx context.Context, src *source, err error, trace string) *Error {
	if ctx.Err() != nil {
		return &Error{File: src.name, Msg: "package initialization interrupted: " + ctx.Err().Error()}
	}
	var p interp.Panic
	if !errors.As(err, &p) {
		return compileFault(src, err)
	}
	e := panicFault(src, "package initialization", p, trace)
	if !panicLine.MatchString(trace) {
		e.Func = ""
		e.Msg = fmt.Sprintf("the interpreter cannot compile this file (%v)", p.Value)
	}
	return e
}

// collect makes the exported functions and constants Starlark attributes,
// under their snake_case and their Go names. Variables and types stay
// inside: a variable's value would be a stale copy.
func (m *Package) collect(syms map[string]reflect.Value) error {
	funcs, consts := m.src.exportedDecls()
	for name, v := range syms {
		var val starlark.Value
		switch {
		case funcs[name] != nil && v.Kind() == reflect.Func:
			val = newFunc(m, name, v, funcs[name])
			m.funcs = append(m.funcs, val.(*Func))
		case consts[name]:
			c, err := constFromGo(v)
			if err != nil {
				continue
			}
			val = c
		default:
			continue
		}
		m.attrs[name] = val
		m.attrs[snake(name)] = val
		m.names = append(m.names, snake(name))
	}
	sort.Strings(m.names)
	sort.Slice(m.funcs, func(i, j int) bool { return m.funcs[i].name < m.funcs[j].name })
	if len(m.names) == 0 {
		return &Error{File: m.src.name, Msg: "no exported functions", Hint: "start the names of the functions to call with a capital letter"}
	}
	return nil
}

// funcDecl is what the source says of a function: its parameter names (so
// that Starlark can pass them by keyword) and its signature as written.
type funcDecl struct {
	params []string
	sig    string // "(kind string, n int) (Mix, error)"
}

// exportedDecls returns the exported top-level functions and constants.
func (src *source) exportedDecls() (funcs map[string]*funcDecl, consts map[string]bool) {
	funcs, consts = map[string]*funcDecl{}, map[string]bool{}
	f := src.file
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.IsExported() {
				var sig strings.Builder
				printer.Fprint(&sig, src.fset, d.Type) //nolint:errcheck // a strings.Builder does not fail
				funcs[d.Name.Name] = &funcDecl{params: paramNames(d.Type), sig: strings.TrimPrefix(sig.String(), "func")}
			}
		case *ast.GenDecl:
			if d.Tok != token.CONST {
				continue
			}
			for _, spec := range d.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					consts[n.Name] = n.IsExported()
				}
			}
		}
	}
	return funcs, consts
}

// paramNames lists a function's parameter names ("" for unnamed ones).
func paramNames(ft *ast.FuncType) []string {
	names := []string{}
	for _, field := range ft.Params.List {
		if len(field.Names) == 0 {
			names = append(names, "")
		}
		for _, n := range field.Names {
			names = append(names, n.Name)
		}
	}
	return names
}

// constFromGo converts a constant; yaegi keeps untyped ones as
// go/constant values.
func constFromGo(v reflect.Value) (starlark.Value, error) {
	c, ok := v.Interface().(constant.Value)
	if !ok {
		return fromGo(v)
	}
	switch c.Kind() {
	case constant.Bool:
		return starlark.Bool(constant.BoolVal(c)), nil
	case constant.String:
		return starlark.String(constant.StringVal(c)), nil
	case constant.Int:
		n, ok := new(big.Int).SetString(c.ExactString(), 10)
		if !ok {
			return nil, fmt.Errorf("integer constant %s", c.ExactString())
		}
		return starlark.MakeBigInt(n), nil
	case constant.Float:
		f, _ := constant.Float64Val(c)
		return starlark.Float(f), nil
	}
	return nil, fmt.Errorf("constant of kind %s", c.Kind())
}
