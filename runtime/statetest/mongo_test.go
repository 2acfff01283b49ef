package statetest

import (
	"strings"
	"testing"

	"github.com/benchbook/benchbook/builtins/workload/mongotest"
)

// The Mongo database as a tracked resource (FerretDB as the server): a
// measurement cached on one state of the collection is not a hit once
// another cell changes the collection before it, and is a hit again (its
// state restored from the dump when a later cell needs it) once that cell
// is gone.
const mongoNB = `# %% db
m = backend.mongo(param("uri", ""))

# %% data
m.insert("kv", [{"_id": i, "v": 0} for i in range(100)])
%s
# %% measure
r = workload.mongo(m, op = "find", collection = "kv", request = {"filter": {"v": 0}}, clients = 1, duration = "300ms", warmup = 0)
r.docs_per_req

# %% count
m.count("kv", {"v": 0}) + 0 * param("k", 0)
`

// mongoTweak changes the collection through a workload, which says nothing
// of it: the database's content hash moving is what marks the change.
const mongoTweak = `
# %% tweak
workload.mongo(m, op = "update", collection = "kv", request = {"filter": {"_id": {"$lt": 10}}, "update": {"$set": {"v": 1}}, "many": True},
               clients = 1, duration = "200ms", warmup = 0).count > 0
`

func TestMongoChangedCollectionIsNotAHit(t *testing.T) {
	uri := mongotest.Start(t) + "nb"
	dir := t.TempDir()
	cache := dir + "/cache"
	params := map[string]string{"uri": uri}
	plain := strings.Replace(mongoNB, "%s", "", 1)
	tweaked := strings.Replace(mongoNB, "%s", mongoTweak, 1)
	steps := []struct {
		name, nb, k   string
		measure, cnt  string
		measureStatus string // "" any
	}{
		{"first run", plain, "0", "100.0", "100", "ran"},
		{"rerun", plain, "0", "100.0", "100", "hit"},
		{"a workload updates it before", tweaked, "0", "90.0", "90", "ran"},
		{"that cell gone", plain, "0", "100.0", "100", "hit"},
		{"a later cell reruns on the restored state", plain, "1", "100.0", "100", "hit"},
	}
	for _, s := range steps {
		params["k"] = s.k
		r := RunNB(t, dir, cache, s.nb, params, true)
		if r.Outputs["measure"] != s.measure || r.Outputs["count"] != s.cnt {
			t.Fatalf("%s: measure %q count %q, want %s %s\n%v\n%s", s.name, r.Outputs["measure"], r.Outputs["count"], s.measure, s.cnt, r.Outputs, r.Stderr)
		}
		if r.Status["measure"] != s.measureStatus {
			t.Errorf("%s: measure %s (%s), want %s", s.name, r.Status["measure"], r.Why["measure"], s.measureStatus)
		}
		t.Logf("%s: %v", s.name, r.Status)
	}
}
