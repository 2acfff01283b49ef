package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// raw writes a run.sh directory: meta.txt and, per measurement, hyperfine's
// JSON (three runs whose mean and median differ) and the key=value file.
func raw(t *testing.T) string {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("meta.txt", "git=abc123\nstarted=2026-12-02T10:00:00Z\nload_at_start=0.50 0.40 0.30\nload_at_end=0.60 0.50 0.40\nworkdir=/x (ext2/ext3)\n")
	for _, m := range []struct {
		name, phase, times string
		cells              int
		mean, median       string
	}{
		{"chain3000-cold", "cold", "1.5, 1.8, 2.1", 3000, "1.8", "1.8"},
		{"chain3000-cached", "cached", "0.45, 0.48, 0.57", 3000, "0.5", "0.48"},
		{"chain300-cold", "cold", "0.2, 0.2, 0.2", 300, "0.2", "0.2"},
	} {
		write(m.name+".json", `{"results": [{"command": "x", "mean": `+m.mean+`, "stddev": 0.1, "median": `+m.median+`, "min": 0.1, "max": 3,
			"user": 0.3, "system": 0.15, "times": [`+m.times+`]}]}`)
		write(m.name+".txt", "name="+m.name+"\ncells="+itoa(m.cells)+"\nphase="+m.phase+"\nload1_before=0.31\nload1_after=0.42\n")
	}
	write("gobench.txt", "goos: linux\nBenchmarkLookup-2   50   24000 ns/op\nPASS\n")
	return dir
}

func itoa(n int) string {
	if n == 3000 {
		return "3000"
	}
	return "300"
}

// The table holds the raw files' figures, per cell: 1.8 s over 3,000 cells
// is 0.600 ms a cell, 0.45 s of CPU 0.150.
func TestRender(t *testing.T) {
	set, err := readRaw(raw(t))
	if err != nil {
		t.Fatal(err)
	}
	out := render(set)
	for _, want := range []string{
		"| 3,000 | 1.800 s (1.800), 3 runs | 0.600 | 0.150 | 0.500 s (0.480), 3 runs | 0.167 | 0.150 | 0.31 → 0.42; 0.31 → 0.42 |",
		"| 300 | 0.200 s (0.200), 3 runs | 0.667 | 1.500 | – | – | – | 0.31 → 0.42; – |",
		"git abc123", "BenchmarkLookup-2   50   24000 ns/op",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Index(out, "| 300 |") > strings.Index(out, "| 3,000 |") {
		t.Error("rows not in order of size")
	}
}
