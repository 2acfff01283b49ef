package cpusample

import (
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/procfs"
)

// spin starts a CPU-bound shell loop that ends by itself after 5 s.
// detached: its parent exits at once, so it is not our descendant.
func spin(t *testing.T, detached bool) int {
	t.Helper()
	loop := `timeout --foreground 5 sh -c 'while :; do :; done'`
	// Its own process group, killed whole: SIGKILL to timeout alone would
	// leave the loop running for ever.
	group := &syscall.SysProcAttr{Setpgid: true}
	if !detached {
		cmd := exec.Command("sh", "-c", loop)
		cmd.SysProcAttr = group
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
		return cmd.Process.Pid
	}
	cmd := exec.Command("sh", "-c", loop+" >/dev/null 2>&1 & echo $!")
	cmd.SysProcAttr = group
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	return pid
}

// sampleUntil takes two samples at least 500 ms apart and keeps the second
// going until pid's process tree has used a few ticks (a busy shared box may
// give a spinning loop little CPU), for at most 5 s.
func sampleUntil(t *testing.T, pid int) (Sample, Sample) {
	t.Helper()
	a, err := Take()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		time.Sleep(500 * time.Millisecond)
		b, err := Take()
		if err != nil {
			t.Fatal(err)
		}
		if treeTicks(a, b, pid) >= 3 || time.Now().After(deadline) {
			return a, b
		}
	}
}

// treeTicks is the CPU ticks pid and its descendants used between a and b.
func treeTicks(a, b Sample, pid int) uint64 {
	var n uint64
	for p := range ours(b, []int{pid}) {
		if p == os.Getpid() {
			continue
		}
		if !isDescendant(b, p, pid) {
			continue
		}
		if b.Procs[p].ticks > a.Procs[p].ticks {
			n += b.Procs[p].ticks - a.Procs[p].ticks
		}
	}
	return n
}

func isDescendant(s Sample, p, root int) bool {
	for i := 0; i < 64 && p > 1; i++ {
		if p == root {
			return true
		}
		p = s.Procs[p].ppid
	}
	return p == root
}

// A process we did not start is foreign until we observe it; then exactly
// its CPU moves from foreign to ours. Both views come from the same two
// samples, so the other jobs on a shared box cancel out.
func TestForeignProcess(t *testing.T) {
	pid := spin(t, true)
	a, b := sampleUntil(t, pid)
	spun := treeTicks(a, b, pid)
	if spun == 0 {
		t.Skip("the spinning loop got no CPU in 5 s")
	}
	if ours(b, nil)[pid] {
		t.Errorf("detached pid %d counted as our descendant", pid)
	}
	blind, seen := Between(a, b, nil), Between(a, b, []int{pid})
	want := float64(spun) / procfs.TicksPerSecond / blind.Seconds
	if moved := seen.Ours - blind.Ours; math.Abs(moved-want) > 1e-9 {
		t.Errorf("observing the pid moved %.4f cores to ours, its tree used %.4f (blind %+v, seen %+v)", moved, want, blind, seen)
	}
	if blind.Foreign < want*0.99 && blind.Foreign < 1.0 {
		t.Errorf("foreign CPU %.3f cores, less than the foreign loop's %.3f", blind.Foreign, want)
	}
}

// A child of this process, and its own children, are ours without being
// observed.
func TestChildIsOurs(t *testing.T) {
	pid := spin(t, false)
	a, b := sampleUntil(t, pid)
	set := ours(b, nil)
	if !set[pid] {
		t.Fatalf("child %d not counted as ours", pid)
	}
	grandchildren := 0
	for p, proc := range b.Procs {
		if proc.ppid == pid && set[p] {
			grandchildren++
		}
	}
	if grandchildren == 0 {
		t.Errorf("the child's own children (timeout's sh) are not counted as ours")
	}
	u := Between(a, b, nil)
	if got, min := u.Ours*u.Seconds*procfs.TicksPerSecond, float64(treeTicks(a, b, pid)); got < min-1e-6 {
		t.Errorf("ours %.1f ticks, less than the child's tree alone (%.0f)", got, min)
	}
}
