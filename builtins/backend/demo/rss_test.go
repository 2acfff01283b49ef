package demo

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/workload"
)

// TestObserveGivesRSSPeak: observe = [demo] gives server_rss_peak_kb, as
// its reference promises, bounded by the kernel's own figures for the
// process: at least its resident size now, at most its high-water mark.
func TestObserveGivesRSSPeak(t *testing.T) {
	g := run(t, `
d = demo(index = True, rows = 20000)
r = workload.http(d.url + "/search?q=t0042&limit=20", clients = 2, duration = "600ms", warmup = "100ms", observe = [d])
peak = r.server_rss_peak_kb
`)
	h := g["d"].(*Handle)
	defer h.kill()
	peak, _ := starlark.AsFloat(g["peak"])
	rss, hwm := statusKB(t, h.cmd.Process.Pid, "VmRSS:"), statusKB(t, h.cmd.Process.Pid, "VmHWM:")
	if peak <= 0 || peak < 0.9*rss || peak > hwm*1.02 {
		t.Errorf("server_rss_peak_kb = %v; the kernel says VmRSS %v kB, VmHWM %v kB", peak, rss, hwm)
	}
	if u := workload.Undocumented(g["r"].(starlark.HasAttrs)); len(u) > 0 {
		t.Errorf("run attributes the table of run attributes (and the reference) does not list: %v", u)
	}
}

func statusKB(t *testing.T, pid int, field string) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
