package backendtest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// session runs a kind's snippets one after another on one thread of a
// runtime session (closed when the test ends, with every handle started
// in it), each seeing the globals the ones before defined.
type session struct {
	t   testing.TB
	th  *starlark.Thread
	env starlark.StringDict
	n   int
}

func newSession(t testing.TB, k Kind) *session {
	t.Helper()
	o := startest.Options{Cell: &runtime.Cell{Name: strings.ReplaceAll(t.Name(), "/", "_")}, Modules: k.Modules}
	th := startest.Thread(t, o)
	env := startest.Env(t, o)
	if k.Vars != nil {
		for name, v := range k.Vars(t.(*testing.T)) {
			env[name] = starlark.String(v)
		}
	}
	return &session{t: t, th: th, env: env}
}

// exec runs src; its globals join the session's.
func (s *session) exec(src string) error {
	s.n++
	g, err := starlark.ExecFileOptions(runtime.FileOptions(), s.th, fmt.Sprintf("snippet%d.star", s.n), src, s.env)
	for name, v := range g {
		s.env[name] = v
	}
	return err
}

func (s *session) must(src string) {
	s.t.Helper()
	if err := s.exec(src); err != nil {
		s.t.Fatalf("%s\n%s", src, startest.Describe(err))
	}
}

// eval is the value of expression expr.
func (s *session) eval(expr string) starlark.Value {
	s.t.Helper()
	s.must("value_ = " + expr)
	return s.env["value_"]
}

// start runs k.Start and returns h, checked to be of the kind's type.
func (s *session) start(k Kind) handle.Handle {
	s.t.Helper()
	s.must(k.Start)
	return s.handle(k)
}

// handle is the session's h, checked to be of the kind's type.
func (s *session) handle(k Kind) handle.Handle {
	s.t.Helper()
	h, ok := s.env["h"].(handle.Handle)
	if !ok || reflect.TypeOf(h) != reflect.TypeOf(k.Handle) {
		s.t.Fatalf("the snippet bound h to a %T, want a %T", s.env["h"], k.Handle)
	}
	return h
}

// vars are k's variables as Starlark assignments, for a notebook's cell.
func vars(t *testing.T, k Kind) string {
	var b strings.Builder
	if k.Vars != nil {
		for name, v := range k.Vars(t) {
			fmt.Fprintf(&b, "%s = %q\n", name, v)
		}
	}
	return b.String()
}
