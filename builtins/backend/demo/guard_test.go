package demo

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// A demo killed from outside during a run trips its guard; one stopped by
// benchbook after the run does not.
func TestDemoGuard(t *testing.T) {
	h := run(t, `d = demo(rows = 2000)`)["d"].(*Handle)
	defer h.kill()
	stop := h.Watch(context.Background(), time.Now())
	if err := syscall.Kill(h.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-h.done
	trips := stop()
	if len(trips) != 1 || trips[0].Kind != "killed" || !trips[0].Fatal || !strings.Contains(trips[0].Evidence, "not by benchbook") {
		t.Fatalf("trips after a SIGKILL from outside: %+v", trips)
	}

	h2 := run(t, `d = demo(rows = 2000)`)["d"].(*Handle)
	stop2 := h2.Watch(context.Background(), time.Now())
	if trips := stop2(); len(trips) != 0 {
		t.Fatalf("trips of a healthy demo: %+v", trips)
	}
	h2.kill()
}

// TestUnobservedDemoDeathInvalidatesRun: a demo the run sends traffic to
// is watched though observe does not list it (issue 33): killed from
// outside mid-run, it makes the run invalid, and the next run against it
// too.
func TestUnobservedDemoDeathInvalidatesRun(t *testing.T) {
	killLater := starlark.NewBuiltin("kill_later", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var pid int
		var after float64
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pid", &pid, "after", &after); err != nil {
			return nil, err
		}
		time.AfterFunc(time.Duration(after*float64(time.Second)), func() { syscall.Kill(pid, syscall.SIGKILL) })
		return starlark.None, nil
	})
	g := startest.MustExec(t, startest.Options{Modules: testModules(), Globals: starlark.StringDict{"demo": Builtin, "kill_later": killLater}}, `
d = demo(rows = 2000)
kill_later(d.pid, 0.8)
r = workload.http(d.url + "/search?q=t0042&limit=5", rate = 200, duration = "3s", warmup = "0s")
assert.eq(r.valid, False)
assert.eq([t.kind for t in r.trips if t.fatal], ["killed"])
assert.true("not by benchbook" in r.invalid_reason, r.invalid_reason)
again = workload.http(d.url + "/", clients = 1, duration = "0.3s", warmup = "0s")
assert.eq(again.valid, False)
`)
	defer g["d"].(*Handle).kill()
}
