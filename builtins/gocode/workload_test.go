package gocode

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/workload"
	"github.com/benchbook/benchbook/runtime"
)

// TestWorkloadCallsFunc: workload.http(request = gen.fn) sends the paths
// the interpreted generator makes, called from Go through Func().
func TestWorkloadCallsFunc(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.RequestURI()]++
		mu.Unlock()
	}))
	defer srv.Close()

	dir := t.TempDir()
	writeGo(t, dir, "gen.go", counterSrc)
	th, _ := thread(t, context.Background(), dir)
	env := runtime.MustModuleSet(nil, Module(), workload.Module(workload.Options{})).Globals()
	env["URL"] = starlark.String(srv.URL)
	g, err := starlark.ExecFile(th, "t.star", `
gen = gocode.file("gen.go")
run = workload.http(URL, request = gen.next, clients = 2, warmup = 0, duration = 0.3)
`, env)
	if err != nil {
		t.Fatal(err)
	}
	count, _ := g["run"].(starlark.HasAttrs).Attr("count")
	if n, _ := starlark.AsInt32(count); n == 0 {
		t.Fatalf("no requests measured: %v", g["run"])
	}
	mu.Lock()
	defer mu.Unlock()
	for uri, n := range seen {
		// gen.next counts its calls: every path is new, unless the mutex
		// around calls failed.
		if !strings.HasPrefix(uri, "/search?q=t") || n != 1 {
			t.Errorf("%s requested %d times", uri, n)
		}
	}
}

// TestWorkloadSurvivesGeneratorPanic: a generator that panics costs its
// requests, not the process; the Go file becomes an input of the cell.
func TestWorkloadSurvivesGeneratorPanic(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	dir := t.TempDir()
	writeGo(t, dir, "gen.go", `package gen

var n int64

func Next() string {
	n++
	if n%2 == 0 {
		panic("even request")
	}
	return "/ok"
}
`)
	th, cell := thread(t, context.Background(), dir)
	env := runtime.MustModuleSet(nil, Module(), workload.Module(workload.Options{})).Globals()
	env["URL"] = starlark.String(srv.URL)
	g, err := starlark.ExecFile(th, "t.star", `
gen = gocode.file("gen.go")
run = workload.http(URL, request = gen.next, clients = 1, warmup = 0, duration = 0.3)
`, env)
	if err != nil {
		t.Fatal(err)
	}
	run := g["run"].(starlark.HasAttrs)
	count, _ := run.Attr("count")
	errs, _ := run.Attr("errors")
	if n, _ := starlark.AsInt32(count); n == 0 || errs.(*starlark.Dict).Len() == 0 {
		t.Fatalf("count %v errors %v: want successes and counted generator errors", count, errs)
	}
	found := false
	for _, in := range cell.Inputs() {
		found = found || strings.HasSuffix(in.Name, "gen.go")
	}
	if !found {
		t.Errorf("gen.go is not an input of the cell: %v", cell.Inputs())
	}
}
