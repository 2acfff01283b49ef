package demo

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
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
