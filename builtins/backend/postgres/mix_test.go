package postgres

import (
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

// TestTagsGetTheirOwnStatementFigures: a mix of point lookups and whole
// scans, observed: pg_stat_statements tells the two apart, so each tag's
// buffers_per_req is its own, and the scan's is the table's pages (the
// catalogue's relpages: a truth the observer does not compute); the
// figures the server cannot split (backend CPU) stay the run's, said so.
// The same holds for two concurrent scenarios.
func TestTagsGetTheirOwnStatementFigures(t *testing.T) {
	g := mustRun(t, `
pg.exec("CREATE TABLE mix_t (id int PRIMARY KEY, v int NOT NULL); INSERT INTO mix_t SELECT g, g FROM generate_series(1, 5000) g")
pg.exec("VACUUM ANALYZE mix_t")
pages = pg.query("SELECT relpages FROM pg_class WHERE relname = 'mix_t'").rows[0]["relpages"]
mix = [
    {"sql": "SELECT v FROM mix_t WHERE id = $1", "args": lambda seq: [seq % 5000 + 1], "tag": "point", "weight": 4},
    {"sql": "SELECT count(*) FROM mix_t WHERE v >= 0", "tag": "scan"},
]
r = workload.sql(pg, requests = mix, clients = 2, duration = "800ms", warmup = "200ms", observe = [pg])
point, scan = r.by_tag["point"], r.by_tag["scan"]
s = workload.concurrent({
    "point": lambda: workload.sql(pg, query = "SELECT v FROM mix_t WHERE id = $1", args = lambda seq: [seq % 5000 + 1], clients = 1),
    "scan": lambda: workload.sql(pg, query = "SELECT count(*) FROM mix_t WHERE v >= 0", clients = 1),
}, duration = "800ms", warmup = "200ms", observe = [pg])
`)
	pages, _ := starlark.AsInt32(g["pages"])
	for _, c := range []struct {
		what        string
		point, scan starlark.Value
	}{{"tags", g["point"], g["scan"]}, {"scenarios", g["s"].(starlark.Mapping), nil}} {
		point, scan := c.point, c.scan
		if c.scan == nil {
			m := c.point.(starlark.Mapping)
			point, _, _ = m.Get(starlark.String("point"))
			scan, _, _ = m.Get(starlark.String("scan"))
		}
		fig := func(r starlark.Value, name string) float64 {
			v, err := r.(starlark.HasAttrs).Attr(name)
			if err != nil || v == nil {
				t.Fatalf("%s: no %s (%v)", c.what, name, err)
			}
			f, _ := starlark.AsFloat(v)
			return f
		}
		pb, sb := fig(point, "buffers_per_req"), fig(scan, "buffers_per_req")
		t.Logf("%s: point %.2f buffers/req, %.3f statements/req; scan %.1f buffers/req; table %d pages", c.what, pb, fig(point, "statements_per_req"), sb, pages)
		if pb < 2 || pb > 5 {
			t.Errorf("%s: a point lookup read %.2f buffers, want 2-5 (index and heap)", c.what, pb)
		}
		if sb < float64(pages) || sb > float64(pages)+5 {
			t.Errorf("%s: a scan read %.1f buffers, the table has %d pages", c.what, sb, pages)
		}
		if s := fig(point, "statements_per_req"); s < 0.95 || s > 1.05 {
			t.Errorf("%s: %.3f statements per point request, want 1", c.what, s)
		}
		w, _ := point.(starlark.HasAttrs).Attr("warnings")
		if !contains(w, "db_cpu_us_per_req") || contains(w, "buffers_per_req,") {
			t.Errorf("%s: the point run's warnings do not say which figures are shared: %s", c.what, w)
		}
	}
}

func contains(list starlark.Value, sub string) bool {
	for x := range starlark.Elements(list.(starlark.Iterable)) {
		if s, ok := starlark.AsString(x); ok && strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
