package gocode

import (
	"cmp"
	"errors"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// preflight finds constructs that the interpreter (yaegi, whose language
// stops near Go 1.22) cannot run, before it sees them: yaegi crashes or
// reports them at a wrong position. It type-checks the file alone (imports
// fail on purpose, which only leaves their uses untyped), so it stays fast
// and needs no Go installation.
func preflight(src *source) *Error {
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
	var typeErr *Error
	conf := types.Config{
		Importer:  noImporter{},
		Error:     func(err error) { typeErr = cmp.Or(typeErr, typeFault(src, err)) },
		GoVersion: "go1.26",
	}
	conf.Check(src.pkg, src.fset, []*ast.File{src.file}, info)

	var found *Error
	ast.Inspect(src.file, func(n ast.Node) bool {
		if found != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.RangeStmt:
			found = rangeFault(src, info, n)
		case *ast.GoStmt:
			found = src.at(n.Go, "go statements are not allowed in gocode: a panic in an interpreted goroutine cannot be recovered and would end benchbook",
				"let the workload's clients provide the concurrency (gocode.file(..., concurrent = True))")
		case *ast.Ident:
			found = builtinFault(src, info, n)
		case *ast.SelectorExpr:
			found = genericFault(src, info, n)
		}
		return found == nil
	})
	return cmp.Or(found, typeErr)
}

// typeFault keeps the type errors that do not come from the imports left
// out on purpose; yaegi misses some (it accepts returning an int as a
// string) and would fail later, in a call, at run time. Errors about names
// or members that cannot be found are left to yaegi: with the imports
// missing, a method promoted from an embedded library type (sync.Mutex's
// Lock) looks undefined here.
func typeFault(src *source, err error) *Error {
	te, ok := err.(types.Error)
	if !ok || te.Soft {
		return nil
	}
	for _, unsure := range []string{"could not import", "undefined", "no field or method", "not a type", "invalid"} {
		if strings.Contains(te.Msg, unsure) {
			return nil
		}
	}
	p := te.Fset.Position(te.Pos)
	return &Error{File: src.name, Line: p.Line, Col: p.Column, Msg: te.Msg}
}

type noImporter struct{}

func (noImporter) Import(string) (*types.Package, error) { return nil, errors.New("not imported") }

func (src *source) at(pos token.Pos, msg, hint string) *Error {
	p := src.fset.Position(pos)
	return &Error{File: src.name, Line: p.Line, Col: p.Column, Msg: msg, Hint: hint}
}

func rangeFault(src *source, info *types.Info, r *ast.RangeStmt) *Error {
	if lit, ok := r.X.(*ast.BasicLit); ok && lit.Kind == token.INT {
		return src.at(r.For, "range over int is not supported by the interpreter", "write `for i := 0; i < n; i++`")
	}
	tv, ok := info.Types[r.X]
	if !ok || tv.Type == nil {
		return nil
	}
	switch t := tv.Type.Underlying().(type) {
	case *types.Basic:
		if t.Info()&types.IsInteger != 0 {
			return src.at(r.For, "range over int is not supported by the interpreter", "write `for i := 0; i < n; i++`")
		}
	case *types.Signature:
		return src.at(r.For, "range over a function (an iterator) is not supported by the interpreter",
			"call the function with a yield callback, or return a slice and range over it")
	}
	return nil
}

// builtinFault reports the Go 1.21 builtins yaegi does not know.
func builtinFault(src *source, info *types.Info, id *ast.Ident) *Error {
	b, ok := info.Uses[id].(*types.Builtin)
	if !ok {
		return nil
	}
	switch b.Name() {
	case "min", "max":
		return src.at(id.Pos(), "the built-in "+b.Name()+" is not supported by the interpreter", "compare with an if")
	case "clear":
		return src.at(id.Pos(), "the built-in clear is not supported by the interpreter", "delete keys in a loop, or make a new map")
	}
	return nil
}

// genericPackages hold only generic functions, which yaegi's standard
// library leaves out.
var genericPackages = map[string]string{
	"slices": "sort.Slice or a loop",
	"maps":   "a loop over the map",
	"cmp":    "the < and > operators",
	"iter":   "a slice or a callback",
}

func genericFault(src *source, info *types.Info, sel *ast.SelectorExpr) *Error {
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return nil
	}
	pkg, ok := info.Uses[x].(*types.PkgName)
	if !ok {
		return nil
	}
	path := pkg.Imported().Path()
	use, ok := genericPackages[path]
	if !ok {
		return nil
	}
	return src.at(sel.Pos(), path+"."+sel.Sel.Name+" is generic; the interpreter's standard library has no generic functions",
		"use "+use)
}
