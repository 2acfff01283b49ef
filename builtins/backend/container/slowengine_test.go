package container

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
)

// slowEngine is the real engine behind a proxy on a socket of the test's
// own (DOCKER_HOST), which answers every inspect of a container late once
// slow is set: an engine under load, which took longer than a 1 s window
// to say where a container's init runs.
func slowEngine(t *testing.T, delay time.Duration) (slow *atomic.Bool) {
	t.Helper()
	slow = new(atomic.Bool)
	inspect := regexp.MustCompile(`^(/v[0-9.]+)?/containers/[^/]+/json$`)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "docker" },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", "/var/run/docker.sock")
		}},
	}
	sock := filepath.Join(t.TempDir(), "engine.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slow.Load() && inspect.MatchString(r.URL.Path) {
			time.Sleep(delay)
		}
		proxy.ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	return slow
}

// An engine slow to answer an inspect (1.2 s, more than a 1 s window) does not
// hold up the window's opening: the container's observer finds its cgroup
// before the window (PrepareObserving), and its run guard asks the engine
// in the background. Before, both asked at the window's opening, one after
// the other, and the observer's first snapshot came after every request
// of the window: the run had no server_cpu_us_per_req.
func TestSlowEngineDoesNotDelayTheWindow(t *testing.T) {
	img := toolImage(t)
	slow := slowEngine(t, 1200*time.Millisecond)
	port := backendtest.FreePort(t)
	g := backendtest.MustExec(t, modules, fmt.Sprintf(`
c = backend.container(%q, env = {"PORT": "%d"}, ready = "http://127.0.0.1:%d/")
slow_engine(True)
r = workload.http(c.url + "/", clients = 2, duration = "1s", warmup = "300ms", observe = [c])
slow_engine(False)
`, img, port, port), starlark.StringDict{"slow_engine": starlark.NewBuiltin("slow_engine",
		func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			slow.Store(args[0] == starlark.True)
			return starlark.None, nil
		})})
	r := g["r"].(starlark.HasAttrs)
	if v, err := r.Attr("server_cpu_us_per_req"); err != nil || v == nil {
		w, _ := r.Attr("warnings")
		t.Fatalf("the run has no server_cpu_us_per_req (%v): %v", err, w)
	}
	if v, _ := r.Attr("valid"); v != starlark.True {
		w, _ := r.Attr("trips")
		t.Errorf("a slow engine is no trip: %v", w)
	}
}
