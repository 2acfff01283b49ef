package runtime

import (
	"strings"
	"testing"
)

// liveNB's workload cell defines a function, so it is live: every value it
// defines reaches runs through the cell's key.
const liveNB = `# %% workload
limit = 10
index_sql = "CREATE INDEX i ON t (day)"
def day_of(i):
    return i % 7

# %% runs
days = [day_of(i) for i in range(limit)]
sql = index_sql
`

// TestRerunReasonNamesOnlyWhatChanged: editing limit alone made runs'
// reason "day_of (from workload) changed, index_sql (from workload)
// changed, limit (from workload) changed" (issue 33): values of a live
// cell were all reported as changed whenever the cell's key moved.
func TestRerunReasonNamesOnlyWhatChanged(t *testing.T) {
	dir := t.TempDir()
	runNotebook(t, dir, liveNB, Options{})
	for _, tc := range []struct{ from, to, want string }{
		{"limit = 10", "limit = 12", "limit (from workload) changed"},
		{"i % 7", "i % 5", "day_of (from workload) changed"},
		{`"CREATE INDEX i ON t (day)"`, `"CREATE INDEX j ON t (day)"`, "index_sql (from workload) changed"},
		// A value runs does not read: runs runs again (a live cell's values
		// are keyed by the cell) and says so, naming nothing it reads.
		{"index_sql = ", "unused = 1\nindex_sql = ", "cell workload changed, but none of the values runs reads from it did (a live cell's values are keyed by the cell)"},
	} {
		src := strings.Replace(liveNB, tc.from, tc.to, 1)
		r := runNotebook(t, dir, src, Options{})
		// The whole reason: a prefix match would let a value that did not
		// change ride along after the one that did.
		if st := r.e.CellRun("runs"); st.Why != tc.want {
			t.Errorf("after %q -> %q: runs %s because %q, want %q", tc.from, tc.to, st.Status, st.Why, tc.want)
		}
		runNotebook(t, dir, liveNB, Options{}) // back, for the next case
	}
}
