package statetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// The reproduction (backendtest.RowsNotebook): rows = A, then B,
// then A again must show A, B, A; the third run finds A's state in its
// snapshot without refilling.
const reproNB = backendtest.RowsNotebook

func TestReproRowsABA(t *testing.T) {
	t.Parallel()
	needs.Postgres(t)
	dir := t.TempDir()
	cache := dir + "/cache"
	steps := []struct {
		rows       string
		dataStatus string
	}{
		{"", "ran"},
		{"100", "ran"},
		{"", "hit"}, // A's state is still in its snapshot: no refill
		{"100", "hit"},
	}
	for i, s := range steps {
		params := map[string]string{}
		want := "200"
		if s.rows != "" {
			params["rows"], want = s.rows, s.rows
		}
		r := RunNB(t, dir, cache, reproNB, params, true)
		if r.Outputs["measure"] != want {
			t.Fatalf("step %d (rows=%s): measure shows %q, want %s\n%s", i, want, r.Outputs["measure"], want, r.Stderr)
		}
		if r.Status["data"] != s.dataStatus {
			t.Errorf("step %d: data is %s (%s), want %s", i, r.Status["data"], r.Why["data"], s.dataStatus)
		}
		// The record from the cache alone says the same.
		rr := RunNB(t, dir, cache, reproNB, params, false)
		if rr.Outputs["measure"] != want || rr.Status["measure"] != "hit" {
			t.Fatalf("step %d: render shows measure %q (%s), want %s hit\n%v\n%s", i, rr.Outputs["measure"], rr.Status["measure"], want, rr.Why, rr.Stderr)
		}
		fmt.Println(strings.TrimSpace(r.Stderr))
	}
}
