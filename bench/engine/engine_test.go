package engine

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchbook/benchbook/builtins/display"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/record"
)

// BenchmarkCachedRun measures a fully cached rerun in process: parse,
// graph, 30 lookups with input checks, decoding and the HTML record.
func BenchmarkCachedRun(b *testing.B) {
	path := filepath.Join(b.TempDir(), "nb.star")
	os.WriteFile(path, []byte(Notebook(30, 20)), 0o644)
	run := func() int {
		nb, err := runtime.ParseFile(path)
		if err != nil {
			b.Fatal(err)
		}
		e, err := runtime.Open(context.Background(), nb, runtime.Options{Stderr: io.Discard, Modules: []runtime.Module{display.Module()}})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		e.Run(true)
		var buf bytes.Buffer
		if err := record.HTML(&buf, e.Record()); err != nil {
			b.Fatal(err)
		}
		if n := e.Summary()[runtime.StatusHit]; n != 30 && b.N > 1 {
			b.Fatalf("%d hits, want 30", n)
		}
		return buf.Len()
	}
	run() // fill the cache
	b.ResetTimer()
	var size int
	for b.Loop() {
		size = run()
	}
	b.ReportMetric(float64(size), "html-bytes")
}

// BenchmarkLookup measures planning alone: keys and cache lookups of 30
// cells, no decoding, no record.
func BenchmarkLookup(b *testing.B) {
	path := filepath.Join(b.TempDir(), "nb.star")
	os.WriteFile(path, []byte(Notebook(30, 20)), 0o644)
	nb, _ := runtime.ParseFile(path)
	e, err := runtime.Open(context.Background(), nb, runtime.Options{Stderr: io.Discard, Modules: []runtime.Module{display.Module()}})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	e.Run(true)
	b.ResetTimer()
	for b.Loop() {
		e.Run(false)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/30/1000, "µs/cell")
}
