// Package backendtest is the conformance suite every backend kind passes.
//
// As litestream's RunWithReplicaClient runs one suite against every
// replica backend, Run runs one against a kind: a kind's test gives a Kind
// (Starlark snippets that start a handle and use it) and the suite tests
// every face of package handle that the kind's handle has:
//
//	start      a handle comes back; dir(h) lists what h.Attr answers;
//	           Close ends it and may be called twice
//	observe    a window with load shows the kind's figure larger than an
//	           idle window; every figure is a documented run attribute
//	guard      a healthy window trips nothing fatal; a SIGKILL of h.pid
//	           mid-window, or h.restart(), trips a fatal guard
//	state      a read leaves the change detector quiet; a write through h,
//	           and one around it, move it; resources.mark() names a new
//	           state after a write in a notebook
//	snapshot   the data saved before a write comes back on a load, and on
//	           resources.reset(mark) in a notebook
//	redaction  a secret in the handle's spec reaches no record (HTML,
//	           Markdown, JSON), no cache entry and no error unredacted
//	cleanup    a benchbook SIGKILLed while it holds the handle leaves no
//	           process of it running
//
// A face the handle has but the Kind gives no snippets for fails the
// suite, as do snippets for a face it lacks: what a kind claims is tested.
package backendtest

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/runtime"
)

// Kind is what the suite needs to drive one kind of backend. Snippets are
// Starlark in the notebook dialect, with the builtins of Modules.
type Kind struct {
	Name    string           // its handles' Type(): "postgres"
	Handle  handle.Handle    // a nil *T of the kind's handle type: its faces
	Modules []runtime.Module // what snippets see: Modules(the kind, ...)
	// Vars are string variables every snippet sees (a test image, a
	// server's URI, a free port), computed for each subtest.
	Vars func(t *testing.T) map[string]string
	// Start binds h to a new handle, in a session of its own.
	Start string

	// Observe: Load sends requests to h for a second or so; Figure is a
	// figure its window must show larger than an idle window's.
	Load   string
	Figure string

	// State and snapshot: Seed puts data in after Start; Read is an
	// expression of what the data is now (compared with ==); Write changes
	// it through h's methods; WriteAround changes it without them (a
	// second client), which only the change detector can see.
	Seed, Read, Write, WriteAround string

	// Redaction: Secret binds h to a handle with the string WORD, a
	// secret, in its spec (a DSN's password, an env value its process
	// prints); Show is an expression of what else of h a notebook would
	// display (its logs); Fail is an expression with WORD in its spec that
	// fails.
	Secret, Show, Fail string
}

// faces are the interfaces of package handle that k's handle meets.
func (k Kind) faces() map[string]bool {
	f := map[string]bool{}
	if _, ok := k.Handle.(handle.Observer); ok {
		f["observe"] = true
	}
	if _, ok := k.Handle.(handle.Guarded); ok {
		f["guard"] = true
	}
	if _, ok := k.Handle.(handle.Stateful); ok {
		f["state"] = true
	}
	return f
}

// Run tests every face of k's handles.
func Run(t *testing.T, k Kind) {
	if k.Handle == nil || k.Start == "" || k.Name == "" || k.Modules == nil {
		t.Fatal("backendtest: a Kind needs its Name, its Handle type, its Modules and Start")
	}
	if helper := inHelper(); helper != "" {
		t.Run("cleanup", func(t *testing.T) { runHelper(t, k, helper) })
		return
	}
	f := k.faces()
	check := func(face string, given ...string) {
		have := 0
		for _, g := range given {
			if g != "" {
				have++
			}
		}
		switch {
		case f[face] && have == 0:
			t.Fatalf("%s handles have the %s face: the Kind must give its snippets", k.Name, face)
		case !f[face] && have > 0:
			t.Fatalf("%s handles lack the %s face, yet the Kind gives snippets for it", k.Name, face)
		}
	}
	check("observe", k.Load, k.Figure)
	check("state", k.Seed, k.Read, k.Write, k.WriteAround)
	t.Logf("%s handles: %s", k.Name, faceList(f))
	// Each face starts handles of its own in a session of its own (and the
	// cleanup face a benchbook of its own): they run in parallel.
	face := func(name string, has bool, test func(*testing.T, Kind)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			only(t, k, has)
			test(t, k)
		})
	}
	face("start", true, testStart)
	face("observe", f["observe"], testObserve)
	face("guard", f["guard"], testGuard)
	face("state", f["state"], testState)
	face("snapshot", f["state"], testSnapshot)
	face("redaction", true, testRedaction)
	face("cleanup", true, testCleanup)
}

// only skips a face the kind's handles do not have.
func only(t *testing.T, k Kind, has bool) {
	t.Helper()
	if !has {
		t.Skipf("%s handles do not have this face", k.Name)
	}
}

func faceList(f map[string]bool) string {
	var out []string
	for k := range f {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "start, redaction and cleanup only"
	}
	return strings.Join(out, ", ") + fmt.Sprintf(" (%d faces beyond start)", len(out))
}
