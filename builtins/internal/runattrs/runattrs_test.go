package runattrs

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the README's table of run attributes")

const (
	readmePath = "../../../README.md"
	begin      = "<!-- run attributes: generated from builtins/internal/runattrs; go test ./builtins/internal/runattrs -update -->\n"
	end        = "<!-- end of run attributes -->\n"
)

// TestREADMETableIsTheList: buffers_per_req and the other observer figures
// were defined nowhere a user looks (issue 33). The README's table is this
// package's list, so it cannot drift (-update rewrites it).
func TestREADMETableIsTheList(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("README has no run attribute table between %q and %q", begin, end)
	}
	want := s[:i+len(begin)] + Markdown() + s[j:]
	if want == s {
		return
	}
	if *update {
		if err := os.WriteFile(readmePath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README's run attribute table differs from the list: run go test ./builtins/internal/runattrs -update")
}

func TestKnown(t *testing.T) {
	for name, want := range map[string]bool{
		"db_cpu_us_per_req": true, "db_cpu_us": true, "buffers_per_req": true, "walwrite_waiters_max": true,
		"mongo_cmd_find_per_req": true, "mongo_coll_orders_index_bytes": true, "rps": true, "p": true,
		"wait_samples_per_req": false, "nonsense": false, "db_cpu_us_per_req_per_req": false,
	} {
		if Known(name) != want {
			t.Errorf("Known(%q) = %v, want %v", name, !want, want)
		}
	}
	seen := map[string]bool{}
	for _, a := range All() {
		if seen[a.Name] {
			t.Errorf("%s is listed twice", a.Name)
		}
		seen[a.Name] = true
		if a.Unit == "" || a.Source == "" || a.Means == "" {
			t.Errorf("%s lacks a unit, source or meaning", a.Name)
		}
	}
}
