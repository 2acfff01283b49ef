package profile

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// The same hot server, read through its own net/http/pprof: hotA's share
// dominates as perf says, with Go's names and no kernel frames.
func TestPprofHotServer(t *testing.T) {
	timing.Only(t, "hotA's share of the server's CPU against hotB's, from pprof's 100 Hz samples: the race pass's load left the server 15 samples in 2 s, 3 against 2")
	h := startHotServer(t, "A")
	rec, err := StartPprof(context.Background(), "http://"+h.addr+"/debug/pprof/profile", PprofOptions{Seconds: 2})
	if err != nil {
		t.Fatal(err)
	}
	n := load(t, h.addr, 2, 2*time.Second)
	p, err := rec.Stop()
	if err != nil {
		t.Fatal(err)
	}
	fns := functionsByName(p)
	t.Logf("%d requests, %d samples, window %s, hotA %.3f hotB %.3f, resolved %.3f, warnings %q", n, p.Samples, p.Window, fns["main.hotA"].Total, fns["main.hotB"].Total, p.ResolvedShare(), p.Warnings)
	if p.Source != "pprof" || p.Samples < 10 {
		t.Fatalf("source %s, %d samples", p.Source, p.Samples)
	}
	// hotA takes ~2.5 times hotB's CPU in arm A (testdata/hotserver); hotB
	// must show by name once the profile has samples enough to catch it
	// (pprof samples at 100 Hz: a loaded box gave 28 in 2 s).
	if a, b := fns["main.hotA"].Total, fns["main.hotB"].Total; a <= 1.5*b || b == 0 && p.Samples >= 60 {
		t.Errorf("hotA %.3f, hotB %.3f (%d samples)", a, b, p.Samples)
	}
	if fns["main.main.func1"].Total < fns["main.hotA"].Total {
		t.Errorf("pprof's unwinder sees the handler that perf's frame pointers skip: main.main.func1 %.3f", fns["main.main.func1"].Total)
	}
	fig, err := p.Figures(Cost{Requests: n})
	if err != nil || fig.CPUSource != "samples" {
		t.Fatalf("%v %+v", err, fig)
	}
}

func TestPprofErrors(t *testing.T) {
	h := startHotServer(t, "A")
	for url, want := range map[string]string{
		"http://" + h.addr + "/nope/profile":     "parsing profile",
		"http://127.0.0.1:1/debug/pprof/profile": "does the target serve net/http/pprof",
		"ftp://x/":                               "not an http(s) URL",
	} {
		rec, err := StartPprof(context.Background(), url, PprofOptions{Seconds: 1})
		if err == nil {
			_, err = rec.Stop()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", url, err, want)
		}
	}
	if _, err := StartPprof(context.Background(), "http://"+h.addr+"/debug/pprof/profile", PprofOptions{}); err == nil {
		t.Error("no seconds accepted")
	}
}
