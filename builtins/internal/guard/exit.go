package guard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// ExitTrip describes how a target's process ended during a run. byUs says
// benchbook stopped it (a .stop() or .restart() in the middle of the run).
func ExitTrip(source string, at float64, pid int, st *os.ProcessState, byUs bool) Trip {
	t := Trip{At: at, Source: source, Kind: "exited", Fatal: true}
	ws, ok := st.Sys().(syscall.WaitStatus)
	switch {
	case st == nil || !ok:
		t.Evidence = "it is gone"
	case ws.Exited():
		t.Evidence = fmt.Sprintf("exit status %d", ws.ExitStatus())
	case byUs:
		t.Kind, t.Evidence = "stopped", fmt.Sprintf("stopped by benchbook (signal %d, %s)", int(ws.Signal()), ws.Signal())
	default:
		t.Kind, t.Evidence = "killed", killedBy(pid, ws.Signal())
	}
	return t
}

// killedBy names who killed pid when the kernel says (its OOM killer,
// from the kernel log where readable); otherwise only the signal.
func killedBy(pid int, sig syscall.Signal) string {
	if sig == syscall.SIGKILL {
		if line := oomLine(pid); line != "" {
			return "killed by the kernel's OOM killer: " + line
		}
	}
	return fmt.Sprintf("killed by signal %d (%s), not by benchbook", int(sig), sig)
}

// oomLine finds "Killed process PID" in the kernel log (/dev/kmsg, readable
// by root): the OOM killer's own record of its victim.
func oomLine(pid int) string {
	// Raw syscalls: through os.File a non-blocking read that finds no more
	// records would park in the poller instead of returning EAGAIN.
	fd, err := syscall.Open("/dev/kmsg", syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer syscall.Close(fd)
	want := "Killed process " + strconv.Itoa(pid) + " "
	buf := make([]byte, 8192)
	found := ""
	for range 100000 { // one record per read; bounded in case the log never ends
		n, err := syscall.Read(fd, buf)
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.EINTR) {
			continue // overwritten while we read: on to the next record
		}
		if err != nil || n <= 0 {
			break
		}
		rec := string(buf[:n])
		if strings.Contains(rec, want) {
			_, msg, _ := strings.Cut(rec, ";")
			found = strings.TrimSpace(msg)
		}
	}
	return found
}

// WatchExit calls trip when done closes before the returned stop is called;
// stop returns that trip, if any.
func WatchExit(ctx context.Context, done <-chan struct{}, trip func() Trip) func() []Trip {
	var mu sync.Mutex
	var trips []Trip
	quit, fin := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(fin)
		select {
		case <-done:
		case <-quit:
		case <-ctx.Done():
		}
		// A target that died before the window closed trips it, even when
		// the close came as fast: select picks among ready cases at random,
		// and a demo killed just before stop was once reported alive.
		select {
		case <-done:
			mu.Lock()
			trips = append(trips, trip())
			mu.Unlock()
		default:
		}
	}()
	return func() []Trip {
		close(quit)
		<-fin
		mu.Lock()
		defer mu.Unlock()
		return trips
	}
}

// NotRunning is the trip of a target found dead when the run starts.
func NotRunning(src string) func() []Trip {
	return func() []Trip {
		return []Trip{{Source: src, Kind: "exited", Fatal: true, Evidence: "not running when the run started"}}
	}
}
