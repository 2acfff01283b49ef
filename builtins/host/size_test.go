package host

import (
	"testing"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// TestGuardSizesAreDockers: "64MB" was 64,000,000 bytes to host.guard and
// 64 MiB to a container's memory limit (issue 33). One rule now, Docker's:
// binary units.
func TestGuardSizesAreDockers(t *testing.T) {
	for in, want := range map[string]int64{"64MB": 64 << 20, "1GiB": 1 << 30, "512m": 512 << 20} {
		g := startest.MustExec(t, startest.Options{Modules: []runtime.Module{Module()}}, `g = host.guard(disk_free_min = "`+in+`")`)["g"].(*hostGuard)
		if g.DiskFreeMin != want {
			t.Errorf("host.guard(disk_free_min = %q): %d bytes, want %d", in, g.DiskFreeMin, want)
		}
	}
}
