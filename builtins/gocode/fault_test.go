package gocode

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// loadFile runs gocode.file(name) in a session rooted at dir.
func loadFile(t *testing.T, ctx context.Context, dir, name string, kwargs ...starlark.Tuple) (*Package, error) {
	t.Helper()
	th, _ := thread(t, ctx, dir)
	v, err := starlark.Call(th, members.Members["file"], starlark.Tuple{starlark.String(name)}, kwargs)
	if err != nil {
		return nil, err
	}
	return v.(*Package), nil
}

// writeGo writes src as dir/name.
func writeGo(t *testing.T, dir, name, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func goFunc(t *testing.T, p *Package, name string) any {
	t.Helper()
	v, err := p.Attr(name)
	if err != nil || v == nil {
		t.Fatalf("no function %s: %v", name, err)
	}
	return v.(*Func).Func()
}

func TestRuntimePanicNamesLine(t *testing.T) {
	_, err := loadAndCall(t, "faults/panics.go", "boom", starlark.String("bad key"))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if e.File != "faults/panics.go" || e.Line != 9 || e.Func != "Boom" || !strings.Contains(e.Msg, "bad key") {
		t.Errorf("got %+v", e)
	}
}

func loadAndCall(t *testing.T, file, fn string, args ...starlark.Value) (starlark.Value, error) {
	t.Helper()
	th, _ := thread(t, context.Background(), "testdata")
	p, err := starlark.Call(th, members.Members["file"], starlark.Tuple{starlark.String(file)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := p.(*Package).Attr(fn)
	return starlark.Call(th, f, args, nil)
}

func TestCompileErrorNamesLine(t *testing.T) {
	dir := t.TempDir()
	writeGo(t, dir, "gen.go", "package gen\n\nfunc Key(i int) string {\n\treturn undefinedThing(i)\n}\n")
	_, err := loadFile(t, context.Background(), dir, "gen.go")
	if err == nil || !strings.Contains(err.Error(), "gocode.file: gen.go:4:9: undefined: undefinedThing") {
		t.Fatalf("got %v", err)
	}
}

func TestRangeOverIntHint(t *testing.T) {
	dir := t.TempDir()
	writeGo(t, dir, "gen.go", "package gen\n\nfunc Sum(xs []int) int {\n\tn := len(xs)\n\ts := 0\n\tfor i := range n {\n\t\ts += xs[i]\n\t}\n\treturn s\n}\n")
	_, err := loadFile(t, context.Background(), dir, "gen.go")
	var e *Error
	if !errors.As(err, &e) || e.Line != 6 || !strings.Contains(e.Hint, "for i := 0; i < n; i++") {
		t.Fatalf("got %v", err)
	}
}

// TestInitCancelled: a package initialization that never ends stops with
// the cell's context, within a second.
func TestInitCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := loadFile(t, ctx, "testdata", "faults/initloop.go")
	if took := time.Since(start); took > 200*time.Millisecond+time.Second {
		t.Errorf("load returned after %v", took)
	}
	if err == nil || !strings.Contains(err.Error(), "faults/initloop.go: package initialization interrupted: context canceled") {
		t.Fatalf("got %v", err)
	}
	// The interpreted loop stopped too: no goroutine is left in yaegi.
	deadline := time.Now().Add(time.Second)
	for interpreterGoroutines() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := interpreterGoroutines(); n > 0 {
		t.Errorf("%d goroutines still in yaegi", n)
	}
}

func interpreterGoroutines() int {
	buf := make([]byte, 1<<20)
	stacks := string(buf[:goruntime.Stack(buf, true)])
	n := 0
	for _, g := range strings.Split(stacks, "\n\n") {
		if strings.Contains(g, "traefik/yaegi") {
			n++
		}
	}
	return n
}

// TestCallContext: a function taking a context sees the cell's context
// cancelled and can stop.
func TestCallContext(t *testing.T) {
	dir := t.TempDir()
	writeGo(t, dir, "gen.go", `package gen

import "context"

func Wait(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}
`)
	ctx, cancel := context.WithCancel(context.Background())
	th, _ := thread(t, ctx, dir)
	p, err := starlark.Call(th, members.Members["file"], starlark.Tuple{starlark.String("gen.go")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(100*time.Millisecond, cancel)
	wait, _ := p.(*Package).Attr("wait")
	_, err = starlark.Call(th, wait, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "gen.wait: context canceled") {
		t.Fatalf("got %v", err)
	}
}

const counterSrc = `package gen

import "strconv"

var n int64

func Next() string {
	n++
	return "/search?q=t" + strconv.FormatInt(n, 10)
}

func Count() int64 { return n }

func Path(i int64) string { return "/search?q=t" + strconv.FormatInt(i%2000, 10) + "&limit=20" }

func Args(i int64) []any { return []any{i, "t" + strconv.FormatInt(i, 10)} }
`

// TestFuncSerialized: calls through Func() from several goroutines are
// serialized by default, so the interpreted counter loses no increment
// (and -race sees no race on it).
func TestFuncSerialized(t *testing.T) {
	dir := t.TempDir()
	writeGo(t, dir, "gen.go", counterSrc)
	p, err := loadFile(t, context.Background(), dir, "gen.go")
	if err != nil {
		t.Fatal(err)
	}
	next := goFunc(t, p, "next").(func() string)
	const workers, calls = 8, 500
	hammer(workers, calls, func(int) { next() })
	count := goFunc(t, p, "count").(func() int64)
	// func() int64 is not one of the workloads' signatures: it comes back
	// through reflect.MakeFunc with the same type.
	if got := count(); got != workers*calls {
		t.Errorf("counter = %d after %d calls", got, workers*calls)
	}
}

// TestFuncConcurrent: yaegi functions without shared state can be called
// from several goroutines at once (concurrent = True: no mutex); run with
// -race.
func TestFuncConcurrent(t *testing.T) {
	dir := t.TempDir()
	writeGo(t, dir, "gen.go", counterSrc)
	p, err := loadFile(t, context.Background(), dir, "gen.go", starlark.Tuple{starlark.String("concurrent"), starlark.True})
	if err != nil {
		t.Fatal(err)
	}
	path := goFunc(t, p, "path").(func(int64) string)
	args := goFunc(t, p, "args").(func(int64) []any)
	var bad sync.Map
	hammer(8, 500, func(i int) {
		if got := path(int64(i)); !strings.HasPrefix(got, "/search?q=t") {
			bad.Store(i, got)
		}
		if a := args(int64(i)); len(a) != 2 || a[0] != int64(i) {
			bad.Store(i, a)
		}
	})
	bad.Range(func(k, v any) bool { t.Errorf("call %v: %v", k, v); return true })
}

// hammer runs fn(i) calls times in each of workers goroutines.
func hammer(workers, calls int, fn func(i int)) {
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				fn(w*calls + i)
			}
		}()
	}
	wg.Wait()
}

// TestFuncPanic: a panic through Func() reaches the Go caller as an *Error
// naming the line, and the function keeps working afterwards.
func TestFuncPanic(t *testing.T) {
	dir := t.TempDir()
	writeGo(t, dir, "gen.go", `package gen

import "strconv"

func Path(i int64) string {
	if i == 3 {
		panic("no path for 3")
	}
	return "/" + strconv.FormatInt(i, 10)
}
`)
	p, err := loadFile(t, context.Background(), dir, "gen.go")
	if err != nil {
		t.Fatal(err)
	}
	path := goFunc(t, p, "path").(func(int64) string)
	r := func() (r any) {
		defer func() { r = recover() }()
		path(3)
		return nil
	}()
	e, ok := r.(*Error)
	// yaegi's trace names the top statement of the body the panic went
	// through: the if (line 6) around the panic (line 7).
	if !ok || e.Line < 6 || e.Line > 7 || e.File != "gen.go" || !strings.Contains(e.Msg, "no path for 3") {
		t.Fatalf("recovered %#v", r)
	}
	if got := path(4); got != "/4" {
		t.Errorf("after a panic: %q", got)
	}
}

// TestInput: the function's input is the file's sha256, under its
// absolute path.
func TestInput(t *testing.T) {
	dir := t.TempDir()
	writeGo(t, dir, "gen.go", counterSrc)
	p, err := loadFile(t, context.Background(), dir, "gen.go")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := p.Attr("next")
	in := v.(*Func).Input()
	sum := sha256.Sum256([]byte(counterSrc))
	if in.Kind != "file" || in.Name != filepath.Join(dir, "gen.go") || in.Hash != hex.EncodeToString(sum[:]) {
		t.Errorf("input %+v", in)
	}
}

// TestCallInterrupted: a call stuck in a loop that never looks at a
// context stops with the cell's context within a second, and the module
// keeps working.
func TestCallInterrupted(t *testing.T) {
	timing.Only(t, "interrupting a stuck call races inside yaegi (interrupt.go)")
	dir := t.TempDir()
	writeGo(t, dir, "gen.go", `package gen

func Spin() int {
	n := 0
	for {
		n++
	}
}

func Add(a, b int) int { return a + b }
`)
	ctx, cancel := context.WithCancel(context.Background())
	th, _ := thread(t, ctx, dir)
	p, err := starlark.Call(th, members.Members["file"], starlark.Tuple{starlark.String("gen.go")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	spin, _ := p.(*Package).Attr("spin")
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err = starlark.Call(th, spin, nil, nil)
	if took := time.Since(start); took > 200*time.Millisecond+time.Second {
		t.Errorf("interrupted call returned after %v", took)
	}
	if err == nil || !strings.Contains(err.Error(), "gen.go: in Spin: interrupted: context canceled") {
		t.Fatalf("got %v", err)
	}
	// A later call (from a thread whose context is live) works.
	th2, _ := thread(t, context.Background(), dir)
	add, _ := p.(*Package).Attr("add")
	for i := 0; i < 3; i++ {
		v, err := starlark.Call(th2, add, starlark.Tuple{starlark.MakeInt(2), starlark.MakeInt(i)}, nil)
		if err != nil || v.String() != strconv.Itoa(2+i) {
			t.Fatalf("after the interrupt: %v, %v", v, err)
		}
	}
}
