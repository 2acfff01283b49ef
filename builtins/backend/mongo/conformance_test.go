package mongo

import (
	"testing"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/builtins/workload/mongotest"
)

// The server under test is FerretDB (the MongoDB wire protocol), started
// for each test by mongotest.
func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Kind{
		Name:    "mongo",
		Handle:  (*Handle)(nil),
		Modules: modules,
		Vars:    func(t *testing.T) map[string]string { return map[string]string{"URI": mongotest.Start(t)} },
		Start:   `h = backend.mongo(URI + "conf", collections = ["kv"])`,
		Load:    `workload.mongo(h, op = "find", collection = "kv", request = {"filter": {"v": 3}}, clients = 2, duration = "1s", warmup = "0s")`,
		Figure:  "mongo_cmd_find",
		Seed:    `h.insert("kv", [{"_id": i, "v": i} for i in range(20)])`,
		Read:    `h.find("kv", sort = {"_id": 1})`,
		Write:   `h.insert("kv", {"_id": 100, "v": 1})`,
		// Another client of the same database: only the content hash sees it.
		WriteAround: `backend.mongo(URI + "conf", track = False).insert("kv", {"_id": 101, "v": 2})`,
		Secret:      `h = backend.mongo(URI.replace("mongodb://", "mongodb://bench:" + WORD + "@") + "conf?authMechanism=PLAIN")`,
		Fail:        `backend.mongo("mongodb://bench:" + WORD + "@127.0.0.1:notaport/conf", db = "conf")`,
	})
}
