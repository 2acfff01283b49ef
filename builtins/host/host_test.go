package host

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

func run(t *testing.T, ctx context.Context, src string) error {
	t.Helper()
	_, err := startest.Exec(t, startest.Options{Ctx: ctx, Modules: []runtime.Module{Module()}}, src)
	return err
}

func TestStarlark(t *testing.T) {
	err := run(t, context.Background(), `
h = host.info()
assert.true(h.cores >= 1)
assert.true(h.cpu != "")
assert.true(h.fingerprint.startswith(h.name))
assert.eq(len(host.loadavg()), 3)

quiet = host.gate(max_load1 = 100000, poll = "0.2s")
assert.eq(quiet.busy, False)
assert.true(quiet.waited_s < 1, "waited %r" % quiet.waited_s)

loud = host.gate(max_load1 = -1, wait = "0.5s", poll = 0.2)
assert.eq(loud.busy, True)
assert.true(loud.waited_s >= 0.5)

p = host.probe()
r = p.stop()
assert.true(r.foreign_cpu >= 0)
assert.true(r.load1_before >= 0 and r.load1_after >= 0)
assert.true(host.foreign_cpu(interval = "0.2s") >= 0)

host.observe(1)
assert.fails(lambda: host.observe(0), "host.observe: pid must be > 0")
assert.fails(lambda: host.gate(wait = "soon"), "host.gate: for parameter \"wait\": malformed duration")
assert.fails(lambda: host.gate(max_load1 = "x"), "max_load1 must be a number or None")
assert.fails(lambda: host.foreign_cpu(interval = "0s"), "interval\": must be > 0")
`)
	if err != nil {
		t.Fatal(err)
	}
}

// A gate waiting on a busy box stops at once on Ctrl-C.
func TestGateCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	err := run(t, ctx, `host.gate(max_load1 = -1, wait = "60s", poll = "0.1s")`)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("err = %v, want context canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("gate took %s to notice the cancel", d)
	}
}

// TestGuardComparesByContent: host.guard values compare by what they
// watch (issue 33: values builtins return compare by content), and equal
// ones are one dict key.
func TestGuardComparesByContent(t *testing.T) {
	err := run(t, context.Background(), `
assert.eq(host.guard(disk_free_min = "2GiB"), host.guard(disk_free_min = "2GiB"))
assert.eq(host.guard(), host.guard(path = "."))
assert.ne(host.guard(disk_free_min = "2GiB"), host.guard(disk_free_min = "3GiB"))
assert.ne(host.guard(), host.guard(swap_pages_max = 5.0))
assert.ne(host.guard(), host.guard(path = "/"))
keys = {}
keys[host.guard(memory_pressure_max = 3.0)] = 1
keys[host.guard(memory_pressure_max = 3.0)] = 2
assert.eq(len(keys), 1)
`)
	if err != nil {
		t.Fatal(err)
	}
}
