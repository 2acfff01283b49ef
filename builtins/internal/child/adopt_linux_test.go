package child

import (
	"errors"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/procfs"
)

// TestAdoptedAreReapedOwnAreWaited: as a subreaper, benchbook adopts the
// orphans of its children; those that exit are reaped (no zombie is left
// below it), while children it started, through Start or not, exiting at
// the same moments, are still waited for by their exec.Cmd, with their
// exit status (a reaper that took them would make Wait fail).
func TestAdoptedAreReapedOwnAreWaited(t *testing.T) {
	if !subreaper() {
		t.Skip("prctl(PR_SET_CHILD_SUBREAPER) refused")
	}
	orphans := exec.Command("sh", "-c", "for i in $(seq 40); do (sleep 0.0$i &); done; sleep 1")
	if err := Start(orphans); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := exec.Command("sh", "-c", "exit 3")
			var err error
			if i%2 == 0 {
				err = Run(c)
			} else {
				err = c.Run() // as git's status is read: not through Start
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 3 {
				t.Errorf("child %d: %v, want exit status 3", i, err)
			}
		}()
	}
	wg.Wait()
	if err := orphans.Wait(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	for _, pid := range procfs.ChildPids(os.Getpid()) {
		if st, err := procfs.ReadStat(pid); err == nil && st.Dead() {
			t.Errorf("zombie child %d (%s) left unreaped", pid, procfs.Cmdline(pid))
		}
	}
}
