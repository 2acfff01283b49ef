// Package gocode benchmarks a request generator interpreted by gocode
// against three others. It measures what a request generator written in Go
// and interpreted by gocode costs per call, against the same requests taken
// from a static list, the same generator compiled, and a Starlark one.
//
//	go test -run '^$' -bench . -benchtime 2s ./bench/gocode/
//	go test -run '^$' -bench Workload -benchtime 1x ./bench/gocode/
//
// The first line's figures are ns per call (calls/s = 1e9 / ns/op). The
// Workload benchmarks drive workload.http against a local server for 3 s
// per variant and report req/s and the generator's own CPU per request;
// they need a quiet machine.
package gocode

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/gocode"
	"github.com/benchbook/benchbook/builtins/workload"
	"github.com/benchbook/benchbook/runtime"
)

// compiledPath is testdata/gen.go's Path, compiled.
func compiledPath(i int64) string {
	return "/search?q=t" + strconv.FormatInt(i*7919%2000, 10) + "&limit=20"
}

func thread(b *testing.B) *starlark.Thread {
	s := &runtime.Session{Ctx: context.Background(), Stderr: io.Discard, NotebookDir: "testdata", CacheDir: b.TempDir()}
	b.Cleanup(s.Close)
	return s.NewThread(&runtime.Cell{Name: "bench"})
}

// load returns testdata/gen.go's Path as a Starlark value.
func load(b *testing.B, th *starlark.Thread, concurrent bool) starlark.Value {
	kw := []starlark.Tuple{{starlark.String("concurrent"), starlark.Bool(concurrent)}}
	m, err := starlark.Call(th, gocode.Module().Globals["gocode"].(*starlarkstruct.Module).Members["file"], starlark.Tuple{starlark.String("gen.go")}, kw)
	if err != nil {
		b.Fatal(err)
	}
	f, err := m.(starlark.HasAttrs).Attr("path")
	if err != nil || f == nil {
		b.Fatalf("no path: %v", err)
	}
	return f
}

func goFunc(b *testing.B, concurrent bool) func(int64) string {
	f := load(b, thread(b), concurrent)
	return f.(interface{ Func() any }).Func().(func(int64) string)
}

var sink string

func BenchmarkStaticList(b *testing.B) {
	list := make([]string, 2000)
	for i := range list {
		list[i] = compiledPath(int64(i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink = list[i%len(list)]
	}
}

func BenchmarkCompiled(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink = compiledPath(int64(i))
	}
}

// BenchmarkFunc: the path workload.http takes, one caller (serialized
// module, the default).
func BenchmarkFunc(b *testing.B) {
	f := goFunc(b, false)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink = f(int64(i))
	}
}

// BenchmarkFuncParallel: several workers share the serialized module.
func BenchmarkFuncParallel(b *testing.B) { parallel(b, goFunc(b, false)) }

// BenchmarkFuncConcurrent: several workers, module loaded with
// concurrent = True (no mutex).
func BenchmarkFuncConcurrent(b *testing.B) { parallel(b, goFunc(b, true)) }

func parallel(b *testing.B, f func(int64) string) {
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var s string
		for i := int64(0); pb.Next(); i++ {
			s = f(i)
		}
		_ = s
	})
}

// BenchmarkStarlarkCall: the gocode function called from Starlark.
func BenchmarkStarlarkCall(b *testing.B) {
	th := thread(b)
	f := load(b, th, false)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := starlark.Call(th, f, starlark.Tuple{starlark.MakeInt(i)}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStarlarkGenerator: the same generator written in Starlark, what
// a notebook would hand to workload.http without gocode.
func BenchmarkStarlarkGenerator(b *testing.B) {
	th := thread(b)
	g, err := starlark.ExecFile(th, "gen.star", starlarkPath, nil)
	if err != nil {
		b.Fatal(err)
	}
	f := g["path"]
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := starlark.Call(th, f, starlark.Tuple{starlark.MakeInt(i)}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWorkload runs workload.http for 3 s per variant against a local
// server: a fixed URL, the gocode generator, and the Starlark one. Use
// -benchtime 1x.
func BenchmarkWorkload(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") }))
	defer srv.Close()
	for _, v := range []struct{ name, request string }{
		{"static", "None"},
		{"gocode", `gocode.file("gen.go").path`},
		{"starlark", "_path"},
	} {
		b.Run(v.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				runWorkload(b, srv.URL, v.request)
			}
		})
	}
}

func runWorkload(b *testing.B, url, request string) {
	th := thread(b)
	opts := &syntax.FileOptions{}
	env := runtime.MustModuleSet(nil, gocode.Module(), workload.Module(workload.Options{})).Globals()
	defs, err := starlark.ExecFileOptions(opts, th, "defs.star", starlarkPath, env)
	if err != nil {
		b.Fatal(err)
	}
	env["_path"] = defs["path"]
	req, err := starlark.EvalOptions(opts, th, "request", request, env)
	if err != nil {
		b.Fatal(err)
	}
	env["URL"], env["REQ"] = starlark.String(url), req
	g, err := starlark.ExecFileOptions(opts, th, "bench.star", `
run = workload.http(URL + "/search?q=t1&limit=20" if REQ == None else URL, request = REQ,
                    clients = 8, warmup = "1s", duration = "3s")
`, env)
	if err != nil {
		b.Fatal(err)
	}
	run := g["run"].(starlark.HasAttrs)
	for _, metric := range []struct{ attr, unit string }{{"rps", "req/s"}, {"gen_cpu_us_per_req", "gen-cpu-µs/req"}} {
		v, err := run.Attr(metric.attr)
		if err != nil {
			b.Fatal(err)
		}
		f, _ := starlark.AsFloat(v)
		b.ReportMetric(f, metric.unit)
	}
}

// starlarkPath is testdata/gen.go's Path in Starlark.
const starlarkPath = `
def path(i):
    return "/search?q=t" + str(i * 7919 % 2000) + "&limit=20"
`
