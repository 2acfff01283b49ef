package guard

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/benchbook/benchbook/runtime/bytesize"
	"github.com/benchbook/benchbook/runtime/procfs"
)

// Host watches the box through a run: free disk under Path against a
// watermark (fatal: a database that cannot write measures its errors, and
// search engines refuse writes under their own watermark), memory pressure
// (PSI) and swapping (warnings: the figures may carry the box's trouble).
type Host struct {
	Path           string  // a path on the disk to watch; "" is the working directory
	DiskFreeMin    int64   // bytes; a sample below trips (0: no disk check)
	MemPressureMax float64 // % of the window some task stalled on memory (PSI "some"); <= 0: no check
	SwapPagesMax   float64 // pages swapped in + out per second; <= 0: no check
}

// DefaultHost is what every run watches unless a host.guard() is among its
// observers: 1 GiB of free disk where benchbook runs, 10% memory stall, 100
// swapped pages a second.
func DefaultHost() Host {
	return Host{DiskFreeMin: 1 << 30, MemPressureMax: 10, SwapPagesMax: 100}
}

// hostSampleEvery is how often the disk is checked during a run.
const hostSampleEvery = 250 * time.Millisecond

// Watch samples the disk through the window and PSI and swap at both ends.
func (h Host) Watch(ctx context.Context, t0 time.Time) func() []Trip {
	path := h.Path
	if path == "" {
		path = "."
	}
	var mu sync.Mutex
	var trips []Trip
	diskTripped := false
	checkDisk := func() {
		if h.DiskFreeMin <= 0 || diskTripped {
			return
		}
		free, err := diskFree(path)
		if err != nil || free >= h.DiskFreeMin {
			return
		}
		diskTripped = true
		mu.Lock()
		trips = append(trips, Trip{At: Since(t0), Source: "host", Kind: "disk", Fatal: true,
			Evidence: fmt.Sprintf("%s free on the disk of %s, under the watermark of %s", bytesize.Format(free), path, bytesize.Format(h.DiskFreeMin))})
		mu.Unlock()
	}
	psi0, psiOK := procfs.MemStallMicros()
	swap0, swapOK := procfs.SwapPages()
	checkDisk()
	stop := Every(ctx, hostSampleEvery, checkDisk)
	return func() []Trip {
		stop()
		checkDisk()
		secs := time.Since(t0).Seconds()
		mu.Lock()
		defer mu.Unlock()
		if psi1, ok := procfs.MemStallMicros(); ok && psiOK && h.MemPressureMax > 0 && secs > 0 {
			if pct := float64(psi1-psi0) / 1e6 / secs * 100; pct > h.MemPressureMax {
				trips = append(trips, Trip{At: secs, Source: "host", Kind: "memory_pressure",
					Evidence: fmt.Sprintf("some task stalled on memory %.1f%% of the run (PSI), over %.1f%%", pct, h.MemPressureMax)})
			}
		}
		if swap1, ok := procfs.SwapPages(); ok && swapOK && h.SwapPagesMax > 0 && secs > 0 {
			if rate := float64(swap1-swap0) / secs; rate > h.SwapPagesMax {
				trips = append(trips, Trip{At: secs, Source: "host", Kind: "swap",
					Evidence: fmt.Sprintf("%.0f pages/s swapped in and out, over %.0f", rate, h.SwapPagesMax)})
			}
		}
		return trips
	}
}

// diskFree is the space an unprivileged writer has left on path's disk.
func diskFree(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil // Bsize is int64 on Linux, uint32 on darwin
}
