package procfs

import (
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestReadProcCountsEveryThread: CPU burnt on threads other than the main
// one shows in ReadProc, checked against getrusage(RUSAGE_SELF), which the
// kernel sums over every thread of the process.
func TestReadProcCountsEveryThread(t *testing.T) {
	before, ok := ReadProc(os.Getpid())
	if !ok {
		t.Fatal("ReadProc of this process failed")
	}
	var ru0, ru1 syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru0); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // keep the burn off the main thread
			defer runtime.UnlockOSThread()
			x := 0
			for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
				x++
			}
			_ = x
		}()
	}
	wg.Wait()
	after, _ := ReadProc(os.Getpid())
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru1); err != nil {
		t.Fatal(err)
	}
	tv := func(v syscall.Timeval) time.Duration { return time.Duration(v.Nano()) }
	want := tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime)
	got := after.CPU - before.CPU
	t.Logf("ReadProc %v, getrusage %v", got, want)
	if want < 100*time.Millisecond {
		t.Skipf("the burn got only %v of CPU; too busy a box to tell", want)
	}
	if got < want*8/10-20*time.Millisecond {
		t.Errorf("ReadProc counted %v of CPU, getrusage %v: threads other than the main one are missing", got, want)
	}
}
