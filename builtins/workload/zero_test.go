package workload

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// A run that completed no request in its window has no figures per
// request, and a comparison that asks for one says why instead of
// suggesting another name (a template's run on a loaded box: "did you
// mean gen_cpu_us_per_req?").
func TestZeroRequestsPerRequestFigure(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { time.Sleep(2 * time.Second) }))
	t.Cleanup(srv.Close)
	g := mustExec(t, `
r = workload.http(url, clients = 1, duration = "0.3s", warmup = "0s", timeout = "1s")
assert.eq(r.count, 0)
`, starlark.StringDict{"url": str(srv.URL)})
	_, err := starval.Metric(&starlark.Thread{}, g["r"], starlark.String("server_cpu_us_per_req"))
	if err == nil || !strings.Contains(err.Error(), "completed no requests in its measured window") || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("per-request figure of a run without requests: %v", err)
	}
}
