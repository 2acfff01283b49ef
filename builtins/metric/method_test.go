package metric

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchbook/benchbook/runtime"
)

// TestMethodChangeMakesComparisonsStale: a comparison cached under one
// method is computed again when the method changes (issue 32 bumped it to
// versions 5 and 6), and is a hit while it does not.
func TestMethodChangeMakesComparisonsStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nb.star")
	src := "# %% cmp\nc = compare([100, 102, 98, 101, 99, 103], [120, 125, 119, 122, 121, 124])\nc\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	status := func() runtime.Status {
		t.Helper()
		nb, err := runtime.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		e, err := runtime.Open(context.Background(), nb, runtime.Options{Modules: testModules()})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		e.Run(true)
		return e.CellRuns()[0].Status
	}
	if s := status(); s != runtime.StatusRan {
		t.Fatalf("first run: %s", s)
	}
	if s := status(); s != runtime.StatusHit {
		t.Fatalf("same method: %s, want hit", s)
	}
	defer func(v string) { methodVersion = v }(methodVersion)
	methodVersion = "7: the next method"
	if s := status(); s != runtime.StatusRan {
		t.Errorf("another method: %s, want ran (the cached comparison is stale)", s)
	}
}
