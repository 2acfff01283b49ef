package postgres

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/procfs"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
	"github.com/benchbook/benchbook/runtime/testsupport/pgtest"
)

// restoreNB: -p rows=100 leaves the cluster in another state than the
// default; rerunning measure at the default then restores a snapshot.
const restoreNB = backendtest.RowsNotebook

// runRestoreNB runs dir/nb.star, rerunning measure, and returns what
// measure shows (or its error) and the progress lines.
func runRestoreNB(ctx context.Context, t testing.TB, dir string, params map[string]string) (string, string) {
	nb, err := runtime.ParseFile(filepath.Join(dir, "nb.star"))
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	e, err := runtime.Open(ctx, nb, runtime.Options{Params: params, Stderr: &stderr, Rerun: []string{"measure"}, Modules: modules})
	if err != nil {
		t.Fatal(err)
	}
	e.Run(true)
	e.Close()
	st := e.CellRun("measure")
	if st.Err != nil {
		return "error: " + st.Err.Error(), stderr.String()
	}
	var parts []string
	for _, o := range st.Outputs() {
		parts = append(parts, o.String())
	}
	return strings.Join(parts, "|"), stderr.String()
}

// restoreHelper is a benchbook that SIGKILLs itself at one step of the
// restore its run makes (BACKEND_RESTORE_HELPER=DIR:STEP).
func restoreHelper(arg string) {
	dir, step, _ := strings.Cut(arg, ":")
	copyStep = func(s, to string) {
		if s == step && filepath.Base(to) == "data" {
			if s == "begin" { // while cp copies: once it has copied PG_VERSION
				go func() {
					for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
						if fileExists(filepath.Join(to, "PG_VERSION")) || fileExists(filepath.Join(to+copyNew, "PG_VERSION")) {
							break
						}
					}
					syscall.Kill(os.Getpid(), syscall.SIGKILL)
				}()
				return
			}
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	runRestoreNB(context.Background(), &testing.T{}, dir, nil)
	fmt.Println("the restore was never interrupted")
	os.Exit(3)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestInterruptedRestoreRecovers interrupts the restore of a snapshot at
// every step of its copy, by a SIGINT (the run's context cancelled) and by
// a real SIGKILL of a benchbook process, then runs again: the cluster
// starts, measure shows what a fresh run shows, and the data dir is the
// postgres account's, mode 0700. Before, the copy removed data/ and then
// copied, and a SIGINT in between left a partial root-owned 0700 data/ that
// every later run failed to start ("fork/exec .../postgres: permission
// denied") until the cache was deleted.
//
// Each interruption is a parallel subtest with a notebook dir of its own,
// seeded with the cluster of the first fresh run as initdb made it.
func TestInterruptedRestoreRecovers(t *testing.T) {
	needs.Postgres(t)
	hooks := installCopyHooks() // copyStep is the package's: set before the parallel tests run
	t.Parallel()
	base := t.TempDir()
	writeRestoreNB(t, base)
	ctx := context.Background()
	fresh, _ := runRestoreNB(ctx, t, base, nil) // an empty cache: the oracle
	if fresh != "200" {
		t.Fatalf("fresh run: %s", fresh)
	}
	pristine := pgtest.KeepPristine(t, filepath.Join(base, ".benchbook", "nb"))
	for _, kill := range []bool{false, true} {
		for _, step := range []string{"begin", "copied", "aside", "renamed"} {
			name := fmt.Sprintf("SIGINT at %s", step)
			if kill {
				name = fmt.Sprintf("SIGKILL at %s", step)
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				writeRestoreNB(t, dir)
				pristine.Seed(t, filepath.Join(dir, ".benchbook", "nb"))
				interruptRestore(t, hooks, dir, step, kill, fresh)
			})
		}
	}
}

// interruptRestore leaves dir's cluster at rows=100, interrupts the next
// default run's restore at step, and checks the run after it.
func interruptRestore(t *testing.T, hooks *copyHooks, dir, step string, kill bool, fresh string) {
	ctx := context.Background()
	// The data now holds rows=100: the next default run restores.
	if got, log := runRestoreNB(ctx, t, dir, map[string]string{"rows": "100"}); got != "100" {
		t.Fatalf("setting up rows=100: %s\n%s", got, log)
	}
	if kill {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "BACKEND_RESTORE_HELPER="+dir+":"+step)
		out, err := cmd.CombinedOutput()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("the helper was not killed: %v\n%s", err, out)
		}
	} else {
		cctx, cancel := context.WithCancel(ctx)
		var fired atomic.Bool
		hooks.set(dir, func(s, to string) {
			if s == step && filepath.Base(to) == "data" {
				fired.Store(true)
				cancel()
			}
		})
		got, log := runRestoreNB(cctx, t, dir, nil)
		hooks.set(dir, nil)
		cancel()
		if !fired.Load() {
			t.Fatalf("the run never reached the step, so nothing was interrupted: %s\n%s", got, log)
		}
		if got == "200" && step == "begin" {
			t.Logf("the restore finished before the cancel reached cp")
		}
	}
	got, log := runRestoreNB(ctx, t, dir, nil)
	if got != fresh {
		t.Fatalf("the next run shows %s, a fresh run %s\n%s", got, fresh, log)
	}
	if strings.Contains(log, "new cluster in") {
		t.Errorf("the next run made the cluster again (initdb) instead of finishing the restore\n%s", log)
	}
	data := filepath.Join(dir, ".benchbook", "nb")
	roots, _ := filepath.Glob(filepath.Join(data, "*", "resources", "cluster-*", "postgres", "data"))
	if len(roots) != 1 {
		roots, _ = filepath.Glob(filepath.Join(data, "resources", "cluster-*", "postgres", "data"))
	}
	if len(roots) != 1 {
		t.Fatalf("data dirs: %v", roots)
	}
	st, err := os.Stat(roots[0])
	if err != nil {
		t.Fatal(err)
	}
	as, _ := unprivileged()
	sys := st.Sys().(*syscall.Stat_t)
	if st.Mode().Perm() != 0o700 || as != nil && sys.Uid != as.uid {
		t.Errorf("data dir mode %v owner %d", st.Mode().Perm(), sys.Uid)
	}
	for _, side := range []string{copyNew, copyOld} {
		if _, err := os.Stat(roots[0] + side); err == nil {
			t.Errorf("%s left beside the data dir", side)
		}
	}
}

func writeRestoreNB(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "nb.star"), []byte(restoreNB), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyHooks lets parallel tests each interrupt their own copies: copyStep
// calls the hook set for the notebook dir the copy is under.
type copyHooks struct {
	mu    sync.Mutex
	byDir map[string]func(step, to string)
}

var hooksOnce struct {
	once  sync.Once
	hooks *copyHooks
}

func installCopyHooks() *copyHooks {
	hooksOnce.once.Do(func() {
		h := &copyHooks{byDir: map[string]func(string, string){}}
		copyStep = h.call
		hooksOnce.hooks = h
	})
	return hooksOnce.hooks
}

func (h *copyHooks) set(dir string, fn func(step, to string)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if fn == nil {
		delete(h.byDir, dir)
		return
	}
	h.byDir[dir] = fn
}

func (h *copyHooks) call(step, to string) {
	h.mu.Lock()
	var fn func(string, string)
	for dir, f := range h.byDir {
		if strings.HasPrefix(to, dir+string(filepath.Separator)) {
			fn = f
		}
	}
	h.mu.Unlock()
	if fn != nil {
		fn(step, to)
	}
}

// TestRunRightAfterSIGKILL: a benchbook killed with SIGKILL leaves its
// postmaster a zombie until its new parent reaps it (PID 1 took about 2 s
// here); a run one second later must start the cluster all the same.
// Before, PostgreSQL took the zombie for a live postmaster ("lock file
// "postmaster.pid" already exists"). The test's helper is a child
// subreaper that never reaps, so the zombie stays as long as it must.
func TestRunRightAfterSIGKILL(t *testing.T) {
	t.Parallel()
	needs.Postgres(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nb.star"), []byte(restoreNB), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BACKEND_REAPER_HELPER="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "ZOMBIE") || !strings.Contains(string(out), "MEASURE 200") {
		t.Fatalf("helper:\n%s", out)
	}
}

// zombieHelper (BACKEND_REAPER_HELPER=DIR) becomes a child subreaper,
// starts a benchbook (killHelper) that runs the notebook and keeps its
// cluster, SIGKILLs it, checks its postmaster is now an unreaped zombie,
// and a second later runs the notebook itself.
func zombieHelper(dir string) {
	if err := prctlSubreaper(); err != nil {
		fmt.Println("prctl:", err)
		os.Exit(1)
	}
	b := exec.Command(os.Args[0], "-test.run=^$")
	b.Env = append(os.Environ(), "BACKEND_REAPER_HELPER=", "BACKEND_HOLD_HELPER="+dir)
	pipe, _ := b.StdoutPipe()
	b.Stderr = os.Stderr
	if err := b.Start(); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	buf := make([]byte, 4096)
	n, _ := pipe.Read(buf)
	if !strings.Contains(string(buf[:n]), "HOLDING") {
		fmt.Printf("the holder said %q\n", buf[:n])
		os.Exit(1)
	}
	b.Process.Signal(syscall.SIGKILL)
	b.Wait()
	pids, _ := filepath.Glob(filepath.Join(dir, ".benchbook", "nb", "resources", "*", "postgres", "data", "postmaster.pid"))
	if len(pids) != 1 {
		fmt.Println("postmaster.pid:", pids)
		os.Exit(1)
	}
	pid := lockPid(pids[0])
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if st, err := procfs.ReadStat(pid); err == nil && st.State == 'Z' {
			fmt.Println("ZOMBIE", pid)
			break
		}
	}
	time.Sleep(time.Second)
	got, log := runRestoreNB(context.Background(), &testing.T{}, dir, nil)
	fmt.Println("MEASURE", got)
	if got != "200" {
		fmt.Println(log)
	}
	os.Exit(0)
}

// holdHelper runs the notebook and keeps its cluster running (the engine
// is never closed), as a benchbook busy in a later cell would.
func holdHelper(dir string) {
	nb, err := runtime.ParseFile(filepath.Join(dir, "nb.star"))
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	e, err := runtime.Open(context.Background(), nb, runtime.Options{Stderr: os.Stderr, Rerun: []string{"measure"}, Modules: modules})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	e.Run(true)
	fmt.Println("HOLDING")
	select {}
}

func prctlSubreaper() error {
	_, _, errno := syscall.Syscall(syscall.SYS_PRCTL, 36 /* PR_SET_CHILD_SUBREAPER */, 1, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// TestLiveLockKept: the lock files of a running postmaster are never taken
// for stale; a pid that runs but is no postmaster of the data dir is.
func TestLiveLockKept(t *testing.T) {
	c := shared.c
	pidFile := filepath.Join(c.dataDir(), "postmaster.pid")
	before, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	c.clearStaleLocks()
	if after, err := os.ReadFile(pidFile); err != nil || string(after) != string(before) {
		t.Fatalf("a live postmaster's postmaster.pid was removed: %v", err)
	}
	if !livePostmaster(c.pid(), c.dataDir()) {
		t.Errorf("the running postmaster is not taken for live")
	}
	if livePostmaster(os.Getpid(), c.dataDir()) {
		t.Errorf("this test process is taken for the data dir's postmaster")
	}
	if livePostmaster(1<<22+7, c.dataDir()) {
		t.Errorf("a pid that does not run is taken for live")
	}
}
