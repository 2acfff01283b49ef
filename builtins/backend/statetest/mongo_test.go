package statetest

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

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
	t.Parallel()
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

// A collection changed while benchbook was not running (another client) is
// seen by the database's content hash at the next start: benchbook warns,
// and the cell rerun gets the state the notebook order gives it back.
func TestMongoOutsideChangeIsDetected(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t) + "outside"
	dir := t.TempDir()
	cache := dir + "/cache"
	params := map[string]string{"uri": uri, "k": "0"}
	nb := strings.Replace(mongoNB, "%s", "", 1)
	if r := RunNB(t, dir, cache, nb, params, true); r.Outputs["count"] != "100" {
		t.Fatalf("first run: %v\n%s", r.Outputs, r.Stderr)
	}
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Database("outside").Collection("kv").DeleteMany(context.Background(), bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 50}}}})
	c.Disconnect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	params["k"] = "1" // count reruns
	r := RunNB(t, dir, cache, nb, params, true)
	if r.Outputs["count"] != "100" || r.Status["count"] != "ran" {
		t.Fatalf("after an outside change: count %s %q, want ran 100\n%s", r.Status["count"], r.Outputs["count"], r.Stderr)
	}
	if !strings.Contains(r.Stderr, "changed outside benchbook") {
		t.Errorf("no warning about the outside change:\n%s", r.Stderr)
	}
}

// mongoTweakByURI changes the collection through a workload given the URI,
// not the handle: no builtin says the database changed, and the next cell
// that uses it must not take that data for the state the last cell left.
const mongoTweakByURI = `
# %% tweak
workload.mongo(param("uri", ""), op = "update", collection = "kv", request = {"filter": {"_id": {"$lt": 10}}, "update": {"$set": {"v": 1}}, "many": True},
               clients = 1, duration = "200ms", warmup = 0).count > 0
`

func TestMongoChangeBetweenCellsIsNotTheirState(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t) + "between"
	dir := t.TempDir()
	params := map[string]string{"uri": uri, "k": "0"}
	nb := strings.Replace(strings.Replace(mongoNB, "%s", "", 1), "# %% count", mongoTweakByURI+"\n# %% count", 1)
	r := RunNB(t, dir, dir+"/cache", nb, params, true)
	if r.Outputs["tweak"] != "True" {
		t.Fatalf("the tweak did not write: %v\n%s", r.Outputs, r.Stderr)
	}
	if r.Outputs["count"] != "100" {
		t.Fatalf("count %q after an unannounced write, want 100 (the state the notebook gives it)\n%s", r.Outputs["count"], r.Stderr)
	}
	if !strings.Contains(r.Stderr, "changed outside benchbook") {
		t.Errorf("no warning about the write:\n%s", r.Stderr)
	}
}
