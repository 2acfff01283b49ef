package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchbook/benchbook/builtins/display"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/record"
)

// BenchmarkChain measures the engine on chains of 300 and 3,000 cells
// (every third showing a 20-row table), in process: a cold run (empty
// cache: every cell executed and stored) and a cached rerun (every cell a
// hit), each with its HTML record. ms/cell is what issue 38 bounds:
// 0.25 ms a cell cached, 2.5 s for 3,000 cells cold, linear in between.
func BenchmarkChain(b *testing.B) {
	for _, n := range []int{300, 3000} {
		src := []byte(Notebook(n, 20))
		b.Run(fmt.Sprintf("cold/cells=%d", n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				path := filepath.Join(b.TempDir(), "nb.star")
				os.WriteFile(path, src, 0o644)
				b.StartTimer()
				runChain(b, path, n, runtime.StatusRan)
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(n), "ms/cell")
		})
		b.Run(fmt.Sprintf("cached/cells=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "nb.star")
			os.WriteFile(path, src, 0o644)
			runChain(b, path, n, runtime.StatusRan)
			b.ResetTimer()
			for b.Loop() {
				runChain(b, path, n, runtime.StatusHit)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N)/float64(n), "ms/cell")
		})
	}
}

// runChain runs the notebook at path as benchbook run does (parse, open,
// run, HTML) and checks that all n cells ended with want.
func runChain(b *testing.B, path string, n int, want runtime.Status) {
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
	if got := e.Summary()[want]; got != n {
		b.Fatalf("%d cells %s, want %d: %v", got, want, n, e.Summary())
	}
}
