package metricname

import (
	"fmt"
	"math"
	"testing"
)

func TestPercentileNames(t *testing.T) {
	for name, want := range map[string]float64{"p50": 50, "p99": 99, "p999": 99.9, "p9999": 99.99, "p99.9": 99.9, "p100": 100, "p0": 0} {
		got, ok := Percentile(name)
		if !ok || math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = p%v (%v), want p%v", name, got, ok, want)
		}
	}
	for _, name := range []string{"rps", "p", "pp99", "p99x"} {
		if _, ok := Percentile(name); ok {
			t.Errorf("%s read as a percentile", name)
		}
	}
}

// The direction of a metric from its name (issue 32, case 3).
func TestDirection(t *testing.T) {
	for name, want := range map[string]string{
		"write_mb_s": "higher", "read_kb_s": "higher", "wal_bytes_per_s": "higher", "net_mib_s": "higher",
		"errors_per_s": "lower", "retries_per_s": "lower", "dropped_per_s": "lower", "error_rate": "lower",
		"timeouts": "lower", "p99": "lower", "rps": "higher", "ops_per_s": "higher", "commit_s": "lower",
		"db_cpu_us_per_req": "lower", "buffers_per_req": "lower", "mem_anon_kb": "lower",
	} {
		if got, ok := Direction(name); !ok || got != want {
			t.Errorf("Direction(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	// A name that is a unit on its own reads as the unit: a bare "mb_s"
	// is a rate, not seconds (it matched "_s" and read as lower).
	for name, want := range map[string]string{
		"mb_s": "higher", "kb_s": "higher", "MB_s": "higher", "gib_s": "higher", "b_s": "higher",
		"bytes_per_s": "higher", "per_s": "higher", "rows_s": "higher", "req_s": "higher",
		"ms": "lower", "s": "lower", "us": "lower", "per_req": "lower",
	} {
		if got, ok := Direction(name); !ok || got != want {
			t.Errorf("Direction(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{"shape", "db_cpu", "hits"} {
		if got, ok := Direction(name); ok {
			t.Errorf("Direction(%q) = %q: an unknown name must be refused", name, got)
		}
	}
}

// TestTaggedNames: "p99[read]" is the p99 of tag read; a scenario's tag
// nests; a malformed name is not a tag's.
func TestTaggedNames(t *testing.T) {
	for name, want := range map[string]string{
		"p99[read]": "p99 [read]", "rps[write]": "rps [write]", "db_cpu_us_per_req[GET /x]": "db_cpu_us_per_req [GET /x]",
		"p99[reads][read]": "p99 [reads read]",
	} {
		base, tags, ok := Tagged(name)
		if got := fmt.Sprint(base, " ", tags); !ok || got != want {
			t.Errorf("Tagged(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{"p99", "p99[", "p99[read", "[read]", "p99[]", "p99[a]x]", "p99[a]b[c]", "p99[a[b]]"} {
		if _, _, ok := Tagged(name); ok {
			t.Errorf("Tagged(%q) read a tag", name)
		}
	}
	if d, ok := Direction("p99[read]"); !ok || d != "lower" {
		t.Errorf(`Direction("p99[read]") = %q, %v`, d, ok)
	}
	if d, ok := Direction("rps[write]"); !ok || d != "higher" {
		t.Errorf(`Direction("rps[write]") = %q, %v`, d, ok)
	}
}
