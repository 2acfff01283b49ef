package gocode

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.starlark.net/starlark"

	_ "github.com/benchbook/benchbook/builtins/workload" // predeclares workload
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
	_, th, _ := session(t, context.Background(), dir)
	env := runtime.Predeclared()
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
