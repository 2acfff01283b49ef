package mongo

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/procfs"
)

// StartObserving begins a measurement window on the server; stop ends it
// and returns the figures over it, in total and per request (_per_req),
// from serverStatus:
//
//	mongo_cmd_<command>    commands run, by name (metrics.commands.<name>.total;
//	                       FerretDB and MongoDB), e.g. mongo_cmd_find
//	mongo_cmd_failed       commands that failed
//	mongo_op_<kind>        opcounters (insert, query, update, delete,
//	                       getmore, command; MongoDB)
//	mongo_docs_<kind>      documents returned, inserted, updated, deleted
//	                       (metrics.document; MongoDB)
//	mongo_keys_examined    index keys scanned (metrics.queryExecutor.scanned; MongoDB)
//	mongo_docs_examined    documents scanned (queryExecutor.scannedObjects; MongoDB)
//	mongo_cpu_us           the server process's CPU (µs), from /proc, when
//	                       the server runs on this machine (loopback URI)
//	mongo_wt_read_bytes    WiredTiger bytes read into cache (MongoDB)
//
// and at the window's end (no _per_req): mongo_connections (current),
// mongo_wt_cache_bytes (WiredTiger cache in use), and for each collection
// named in backend.mongo(collections = [...]) mongo_coll_<name>_docs,
// _bytes, _storage_bytes, _index_bytes and _indexes (collStats).
func (h *Handle) StartObserving(ctx context.Context) (handle.Stop, error) {
	before, err := h.serverStatus(ctx)
	if err != nil {
		return nil, fmt.Errorf("mongo: observe: %w", err)
	}
	pid := h.localPID(before)
	cpu0 := procCPU(pid)
	quiet := context.WithoutCancel(ctx)
	stop := func(requests int64) (map[string]float64, error) {
		cctx, cancel := context.WithTimeout(quiet, 10*time.Second)
		defer cancel()
		after, err := h.serverStatus(cctx)
		if err != nil {
			return nil, fmt.Errorf("mongo: observe: %w", err)
		}
		out := perRequest(counterDelta(before, after), requests)
		if pid > 0 {
			if cpu1 := procCPU(pid); cpu1 >= cpu0 && cpu0 >= 0 {
				out["mongo_cpu_us"] = float64(cpu1-cpu0) / 1e3
				if requests > 0 {
					out["mongo_cpu_us_per_req"] = out["mongo_cpu_us"] / float64(requests)
				}
			}
		}
		for k, v := range gauges(after) {
			out[k] = v
		}
		for k, v := range h.collGauges(cctx) {
			out[k] = v
		}
		return out, nil
	}
	return stop, nil
}

func (h *Handle) serverStatus(ctx context.Context) (bson.Raw, error) {
	return h.client.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Raw()
}

// counters reads serverStatus's cumulative counters by figure name.
func counters(st bson.Raw) map[string]float64 {
	out := map[string]float64{}
	if cmds, ok := lookupDoc(st, "metrics", "commands"); ok {
		elems, _ := cmds.Elements()
		for _, e := range elems {
			d, ok := e.Value().DocumentOK()
			if !ok {
				continue
			}
			if v, ok := numberAt(d, "total"); ok {
				out["mongo_cmd_"+e.Key()] = v
			}
			if v, ok := numberAt(d, "failed"); ok {
				out["mongo_cmd_failed"] += v
			}
		}
	}
	addNumbers(out, st, "mongo_op_", "opcounters")
	addNumbers(out, st, "mongo_docs_", "metrics", "document")
	if v, ok := numberAt(st, "metrics", "queryExecutor", "scanned"); ok {
		out["mongo_keys_examined"] = v
	}
	if v, ok := numberAt(st, "metrics", "queryExecutor", "scannedObjects"); ok {
		out["mongo_docs_examined"] = v
	}
	if v, ok := numberAt(st, "wiredTiger", "cache", "bytes read into cache"); ok {
		out["mongo_wt_read_bytes"] = v
	}
	return out
}

// counterDelta is after - before, keeping the counters that moved.
func counterDelta(before, after bson.Raw) map[string]float64 {
	b, a := counters(before), counters(after)
	out := map[string]float64{}
	for k, v := range a {
		if d := v - b[k]; d != 0 || strings.HasPrefix(k, "mongo_op_") {
			out[k] = d
		}
	}
	return out
}

func perRequest(tot map[string]float64, requests int64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range tot {
		out[k] = v
		if requests > 0 {
			out[k+"_per_req"] = v / float64(requests)
		}
	}
	return out
}

// gauges are serverStatus's point values at the window's end.
func gauges(st bson.Raw) map[string]float64 {
	out := map[string]float64{}
	if v, ok := numberAt(st, "connections", "current"); ok {
		out["mongo_connections"] = v
	}
	if v, ok := numberAt(st, "wiredTiger", "cache", "bytes currently in the cache"); ok {
		out["mongo_wt_cache_bytes"] = v
	}
	return out
}

// collGauges are collStats of the observed collections.
func (h *Handle) collGauges(ctx context.Context) map[string]float64 {
	out := map[string]float64{}
	for _, c := range h.observed {
		st, err := h.collStats(ctx, c)
		if err != nil {
			continue
		}
		for k, v := range st {
			out["mongo_coll_"+c+"_"+k] = v
		}
	}
	return out
}

// collStats reads a collection's size figures.
func (h *Handle) collStats(ctx context.Context, coll string) (map[string]float64, error) {
	raw, err := h.client.Database(h.db).RunCommand(ctx, bson.D{{Key: "collStats", Value: coll}}).Raw()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, field := range map[string]string{"docs": "count", "bytes": "size", "storage_bytes": "storageSize",
		"index_bytes": "totalIndexSize", "indexes": "nindexes"} {
		if v, ok := numberAt(raw, field); ok {
			out[name] = v
		}
	}
	return out, nil
}

// stats is m.stats(collection) -> dict: docs, bytes, storage_bytes,
// index_bytes, indexes (collStats), as the server reports them.
func (h *Handle) stats(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var coll string
	if err := starlark.UnpackArgs(name, args, kwargs, "collection", &coll); err != nil {
		return nil, err
	}
	if err := h.touch(th, false); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	st, err := h.collStats(runtime.Context(th), coll)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", name, coll, err)
	}
	d := starlark.NewDict(len(st))
	for _, k := range sortedFloatKeys(st) {
		_ = d.SetKey(starlark.String(k), starlark.Float(st[k]))
	}
	return d, nil
}

func sortedFloatKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func lookupDoc(d bson.Raw, path ...string) (bson.Raw, bool) {
	v, err := d.LookupErr(path...)
	if err != nil {
		return nil, false
	}
	return v.DocumentOK()
}

func numberAt(d bson.Raw, path ...string) (float64, bool) {
	v, err := d.LookupErr(path...)
	if err != nil {
		return 0, false
	}
	return v.AsFloat64OK()
}

func addNumbers(out map[string]float64, st bson.Raw, prefix string, path ...string) {
	d, ok := lookupDoc(st, path...)
	if !ok {
		return
	}
	elems, _ := d.Elements()
	for _, e := range elems {
		if v, ok := e.Value().AsFloat64OK(); ok {
			out[prefix+e.Key()] = v
		}
	}
}

// localPID is the server's pid when it runs on this machine: a loopback
// URI and a pid in serverStatus that /proc knows.
func (h *Handle) localPID(st bson.Raw) int {
	u, err := url.Parse(h.connURI)
	if err != nil {
		return 0
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return 0
	}
	pid, ok := numberAt(st, "pid")
	if !ok || pid <= 0 {
		return 0
	}
	if _, err := procfs.ReadStat(int(pid)); err != nil {
		return 0
	}
	return int(pid)
}

// procCPU is a process's CPU in ns, every thread (procfs.ReadProc), -1
// when unreadable.
func procCPU(pid int) int64 {
	if p, ok := procfs.ReadProc(pid); pid > 0 && ok {
		return p.CPU.Nanoseconds()
	}
	return -1
}
