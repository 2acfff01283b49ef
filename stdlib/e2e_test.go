package stdlib_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.starlark.net/starlark"

	_ "github.com/benchbook/benchbook/builtins/workload"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// TestABABWithRealRuns drives a real HTTP server through abab with
// workload.http: arm B's handler is slower, so compare must say that B
// WORSENS latency, and the experiment, the comparison and the verdict must
// be storable.
func TestABABWithRealRuns(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("arm") == "B" {
			time.Sleep(3 * time.Millisecond)
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()

	o := options(t)
	o.Globals["url"] = starlark.String(srv.URL)
	g := startest.MustExec(t, o, `
load("@std/abab.star", "abab")

def one(arm):
    return workload.http(url + "/?arm=" + arm, clients = 2, duration = "0.3s", warmup = "0.1s")

exp = abab(arms = {"A": None, "B": None}, pairs = 6, run = one)  # 6: the fewest pairs a paired test can reach p <= 0.05 with
cmp = compare(exp, metric = lambda r: r.p(50), name = "p50", better = "lower")
v = verdict(status = "reverted", headline = cmp, summary = "the sleep makes it slower")
`)
	cmp := g["cmp"].(starlark.HasAttrs)
	verdict, _ := cmp.Attr("verdict")
	if verdict != starlark.String("WORSENS") {
		s, _ := cmp.Attr("sentence")
		t.Errorf("verdict %s, want WORSENS: %s", verdict, s)
	}
	for _, name := range []string{"exp", "cmp", "v"} {
		data, err := codec.Encode(g[name])
		if err != nil {
			t.Fatalf("%s not storable: %v", name, err)
		}
		if _, err := codec.Decode(data); err != nil {
			t.Fatalf("%s does not decode: %v", name, err)
		}
	}
}
