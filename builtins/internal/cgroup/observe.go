package cgroup

import (
	"context"
	"sync"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/guard"
)

// SampleEvery is how often a window samples memory for its high-water.
const SampleEvery = 100 * time.Millisecond

// Observe opens a measurement window on the group; stop closes it and
// returns the window's figures:
//
//	server_cpu_cores     CPU time of the group / wall time of the window
//	server_cpu_us        CPU time of the group (µs), and _per_req
//	mem_anon_kb          anonymous memory at the end of the window
//	mem_anon_peak_kb     the most anonymous memory sampled in the window
//	mem_cache_kb         page cache at the end of the window
//	mem_high_water_kb    the most memory charged, sampled in the window
//	io_read_bytes        bytes read from block devices in the window
//	io_write_bytes       bytes written to block devices in the window
//	oom_kills            processes the OOM killer killed in the window
//	cpu_throttled        CPU quota periods in which the group was throttled
func Observe(ctx context.Context, g *Group) (stop func(requests int64) map[string]float64, err error) {
	s0, err := g.Read()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	var mu sync.Mutex
	last, anonPeak, usagePeak := s0, s0.Anon, s0.Usage
	sample := func() {
		s, err := g.Read()
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		last, anonPeak, usagePeak = s, max(anonPeak, s.Anon), max(usagePeak, s.Usage)
	}
	quit := guard.Every(ctx, SampleEvery, sample)
	return func(requests int64) map[string]float64 {
		quit()
		sample()
		wall := time.Since(t0).Seconds()
		mu.Lock()
		defer mu.Unlock()
		s1 := last
		out := map[string]float64{
			"server_cpu_us":     float64(s1.CPUNs-s0.CPUNs) / 1e3,
			"mem_anon_kb":       float64(s1.Anon) / 1024,
			"mem_anon_peak_kb":  float64(anonPeak) / 1024,
			"mem_cache_kb":      float64(s1.Cache) / 1024,
			"mem_high_water_kb": float64(usagePeak) / 1024,
			"io_read_bytes":     float64(s1.IORead - s0.IORead),
			"io_write_bytes":    float64(s1.IOWrite - s0.IOWrite),
			"oom_kills":         float64(s1.OOMKills - s0.OOMKills),
			"cpu_throttled":     float64(s1.NrThrottle - s0.NrThrottle),
		}
		if wall > 0 {
			out["server_cpu_cores"] = out["server_cpu_us"] / 1e6 / wall
		}
		if requests > 0 {
			out["server_cpu_us_per_req"] = out["server_cpu_us"] / float64(requests)
		}
		return out
	}, nil
}
