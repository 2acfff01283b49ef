package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestNoOrphanWithoutCgroupOrMarker: without a cgroup (BENCHBOOK_CGROUP=off),
// a target's grandchild that leaves its process group and sheds the marker
// ("setsid env -i /bin/sleep") outlived benchbook, SIGKILLed or SIGTERMed,
// orphaned at once (a subshell that exits) or when its parent was killed.
// benchbook is now a child subreaper and its supervisor walks its tree:
// both are gone within 5 s of benchbook.
func TestNoOrphanWithoutCgroupOrMarker(t *testing.T) {
	t.Parallel()
	for i, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			// Durations no other process has: the sleeps are found by their
			// command lines, having neither a marker nor a parent of ours.
			tag := fmt.Sprintf("%d.%d%d", 1000+i, os.Getpid(), time.Now().UnixNano()%1e6)
			orphan, detached := "/bin/sleep 1"+tag, "/bin/sleep 2"+tag
			nb := writeNB(t, fmt.Sprintf(`# %%%% target
p = backend.process(["sh", "-c", "(setsid env -i %s &); setsid env -i %s & wait"])

# %%%% hold
_p = p
r = workload.exec(["sleep", "60"], runs = 1, warmup = 0)
`, orphan, detached))
			cmd := exec.Command(binary, "run", "-no-color", nb)
			cmd.Env = append(os.Environ(), "BENCHBOOK_CGROUP=off")
			var out syncBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			want := []string{orphan, detached}
			var ids map[string]string
			deadline := time.Now().Add(30 * time.Second)
			for {
				ids = withCmdline(want)
				if len(ids) == len(want) && strings.Contains(out.String(), "run hold") {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("the sleeps never all started: %v\n%s", ids, out.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Cleanup(func() {
				for id := range ids {
					pid, _, _ := strings.Cut(id, "@")
					var n int
					fmt.Sscan(pid, &n)
					if _, alive := withCmdline(want)[id]; alive {
						syscall.Kill(n, syscall.SIGKILL)
					}
				}
			})
			time.Sleep(600 * time.Millisecond) // the supervisor's walk (every 250 ms) has seen them
			cmd.Process.Signal(sig)
			cmd.Wait()
			gone := time.Now()
			for {
				left := withCmdline(want)
				if len(left) == 0 {
					t.Logf("both gone %v after benchbook", time.Since(gone).Round(time.Millisecond))
					return
				}
				if time.Since(gone) > 5*time.Second {
					t.Fatalf("still running 5 s after benchbook's %v: %v\n%s", sig, left, out.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// withCmdline maps the identity (pid@start) of each live process whose
// command line is one of want to that command line.
func withCmdline(want []string) map[string]string {
	out := map[string]string{}
	for _, p := range procs("") {
		for _, w := range want {
			if p.cmdline == w {
				out[p.id] = w
			}
		}
	}
	return out
}

// syncBuffer is a bytes.Buffer the test may read while the process it
// runs still writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
