package gocode

import "reflect"

// Func returns the Go function behind f so that Go code (a workload's
// request generator) can call it per request without Starlark. For the
// signatures the workloads use it is a plain func value of that type:
//
//	func() string, func(int64) string, func(int) string
//	func() []any, func(int64) []any
//
// any other signature comes back as a func of the source's own type.
//
// Calls are serialized by the module's mutex unless it was loaded with
// concurrent = True. yaegi itself is safe to call from several goroutines
// (the tests check it with -race); the mutex protects the state of the
// interpreted code (a *rand.Rand, a counter), which generators usually
// have. A panic in the interpreted code reaches the caller as a panic whose
// value is an *Error naming file:line; callers must recover.
func (f *Func) Func() any {
	m := f.mod
	switch fn := f.v.Interface().(type) {
	case func() string:
		return func() string { m.enter(); defer m.leaveCall(f.name); return fn() }
	case func(int64) string:
		return func(i int64) string { m.enter(); defer m.leaveCall(f.name); return fn(i) }
	case func(int) string:
		return func(i int) string { m.enter(); defer m.leaveCall(f.name); return fn(i) }
	case func() []any:
		return func() []any { m.enter(); defer m.leaveCall(f.name); return fn() }
	case func(int64) []any:
		return func(i int64) []any { m.enter(); defer m.leaveCall(f.name); return fn(i) }
	}
	return reflect.MakeFunc(f.v.Type(), func(in []reflect.Value) []reflect.Value {
		m.enter()
		defer m.leaveCall(f.name)
		return f.v.Call(in)
	}).Interface()
}

// leaveCall must be deferred directly: it recovers a panic of the
// interpreted code and panics again with an *Error that names the line.
func (m *Package) leaveCall(name string) {
	m.leave()
	if r := recover(); r != nil {
		panic(panicFault(m.src, name, r, m.trace.take()))
	}
}
