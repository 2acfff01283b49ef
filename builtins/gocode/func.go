package gocode

import (
	"context"
	"fmt"
	"reflect"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime"
)

// Func is an exported function of an interpreted file, callable from
// Starlark and, through Func(), from Go.
type Func struct {
	mod    *Package
	name   string // Go name
	v      reflect.Value
	params []string // parameter names from the source, after a context.Context
	sig    string   // the signature as written in the source
	hasCtx bool     // the first parameter is a context.Context
}

var (
	contextType                   = reflect.TypeFor[context.Context]()
	_           starlark.Callable = (*Func)(nil)
)

func newFunc(m *Package, name string, v reflect.Value, decl *funcDecl) *Func {
	f := &Func{mod: m, name: name, v: v, params: decl.params, sig: decl.sig}
	t := v.Type()
	if t.NumIn() > 0 && t.In(0) == contextType {
		f.hasCtx = true
		if len(f.params) > 0 {
			f.params = f.params[1:]
		}
	}
	return f
}

// Name is "module.snake_name", as Starlark error messages show it.
func (f *Func) Name() string          { return f.mod.Name() + "." + snake(f.name) }
func (f *Func) String() string        { return fmt.Sprintf("<gocode.func %s%s>", f.name, f.sig) }
func (f *Func) Type() string          { return "gocode.func" }
func (f *Func) Freeze()               {}
func (f *Func) Truth() starlark.Bool  { return true }
func (f *Func) Hash() (uint32, error) { return starlark.String(f.mod.hash + f.name).Hash() }

// Input is the source file as a cache input: a cell that hands this
// function to Go code (workload.http(request = ...)) records it so that
// editing the file makes the cell stale.
func (f *Func) Input() runtime.Input {
	return runtime.Input{Kind: "file", Name: f.mod.path, Hash: f.mod.hash}
}

// CallInternal converts the arguments, calls the Go function (with the
// cell's context first if it takes one) and converts its results. A
// non-nil error result raises a Starlark error.
func (f *Func) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	runtime.AddInput(thread, f.Input())
	in, err := f.bind(runtime.Context(thread), args, kwargs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	out, err := f.mod.call(runtime.Context(thread), f.name, f.v, in)
	if err != nil {
		return nil, err
	}
	return f.results(out)
}

// bind builds the Go arguments from positional and keyword arguments.
func (f *Func) bind(ctx context.Context, args starlark.Tuple, kwargs []starlark.Tuple) ([]reflect.Value, error) {
	vals, err := f.arrange(args, kwargs)
	if err != nil {
		return nil, err
	}
	var in []reflect.Value
	first := 0
	if f.hasCtx {
		in = append(in, reflect.ValueOf(ctx))
		first = 1
	}
	for i, x := range vals {
		pt := f.paramType(first + i)
		v, err := toGo(x, pt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.paramLabel(i), err)
		}
		in = append(in, v)
	}
	return in, nil
}

// paramType is the type of Go parameter i, the variadic element type past
// the last one.
func (f *Func) paramType(i int) reflect.Type {
	t := f.v.Type()
	if t.IsVariadic() && i >= t.NumIn()-1 {
		return t.In(t.NumIn() - 1).Elem()
	}
	return t.In(i)
}

func (f *Func) paramLabel(i int) string {
	if i < len(f.params) && f.params[i] != "" {
		return "parameter " + f.params[i]
	}
	return fmt.Sprintf("argument %d", i+1)
}

// arrange puts positional and keyword arguments in parameter order and
// checks their number.
func (f *Func) arrange(args starlark.Tuple, kwargs []starlark.Tuple) ([]starlark.Value, error) {
	t := f.v.Type()
	fixed := t.NumIn()
	if f.hasCtx {
		fixed--
	}
	if t.IsVariadic() {
		fixed--
		if len(kwargs) > 0 {
			return nil, fmt.Errorf("variadic functions take positional arguments only")
		}
		if len(args) < fixed {
			return nil, fmt.Errorf("got %d arguments, want at least %d", len(args), fixed)
		}
		return args, nil
	}
	if len(args) > fixed {
		return nil, fmt.Errorf("got %d arguments, want %d", len(args), fixed)
	}
	vals := make([]starlark.Value, fixed)
	copy(vals, args)
	for _, kv := range kwargs {
		i := f.paramIndex(string(kv[0].(starlark.String)))
		if i < 0 {
			return nil, fmt.Errorf("unexpected keyword argument %s", kv[0])
		}
		if vals[i] != nil {
			return nil, fmt.Errorf("got multiple values for parameter %s", kv[0])
		}
		vals[i] = kv[1]
	}
	for i, v := range vals {
		if v == nil {
			return nil, fmt.Errorf("missing argument for %s", f.paramLabel(i))
		}
	}
	return vals, nil
}

// paramIndex finds a parameter by its Go or snake_case name.
func (f *Func) paramIndex(name string) int {
	for i, p := range f.params {
		if p != "" && (p == name || snake(p) == name) {
			return i
		}
	}
	return -1
}

// results converts Go results: none is None, one is its value, several are
// a tuple; a trailing error raises when it is not nil.
func (f *Func) results(out []reflect.Value) (starlark.Value, error) {
	t := f.v.Type()
	if n := t.NumOut(); n > 0 && t.Out(n-1) == errorType {
		if e := out[n-1]; !e.IsNil() {
			return nil, fmt.Errorf("%s: %w", f.Name(), e.Interface().(error))
		}
		out = out[:n-1]
	}
	vals := make(starlark.Tuple, len(out))
	for i, o := range out {
		v, err := fromGo(o)
		if err != nil {
			return nil, fmt.Errorf("%s: result %d: %w", f.Name(), i+1, err)
		}
		vals[i] = v
	}
	switch len(vals) {
	case 0:
		return starlark.None, nil
	case 1:
		return vals[0], nil
	}
	return vals, nil
}

// call runs an interpreted function for Starlark: one call at a time
// unless the module was loaded with concurrent = True; a panic becomes an
// *Error, and a call still running when ctx is cancelled is interrupted.
func (m *Package) call(ctx context.Context, name string, fn reflect.Value, in []reflect.Value) (out []reflect.Value, err error) {
	m.enter()
	defer m.leave()
	stop := m.watch(ctx)
	defer func() {
		interrupted := stop()
		if r := recover(); r != nil {
			out, err = nil, panicFault(m.src, name, r, m.trace.take())
		}
		if interrupted {
			out, err = nil, &Error{File: m.src.name, Func: name, Msg: "interrupted: " + ctx.Err().Error()}
		}
	}()
	return fn.Call(in), nil
}

func (m *Package) enter() {
	if m.mu != nil {
		m.mu.Lock()
	}
}

func (m *Package) leave() {
	if m.mu != nil {
		m.mu.Unlock()
	}
}
