package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// orphanNB starts a target whose shell leaves grandchildren (one of them in
// a session of its own, out of every process group benchbook knows), a
// PostgreSQL cluster (whose backends call setsid), and a workload.exec run
// whose command leaves a grandchild, then blocks in that run.
const orphanNB = `# %% target
p = backend.process(["sh", "-c", "sleep 1018 & setsid sleep 1020 & wait"])

# %% db
pg = backend.postgres()
pg.exec("SELECT 1")

# %% load
_started = (p, pg)
r = workload.exec(["sh", "-c", "sleep 1019 & wait"], runs = 1, warmup = 0)
`

// TestNoOrphansAfterSIGKILL kills benchbook with SIGKILL while it runs
// children with grandchildren and checks that every process carrying the
// test's marker (benchbook's environment, inherited by every descendant)
// is gone within a few seconds.
// It runs with cgroups (where writable) and without them: the supervisor's
// marker scan and the parent-death signal must suffice alone.
func TestNoOrphansAfterSIGKILL(t *testing.T) {
	t.Parallel()
	t.Run("cgroup", func(t *testing.T) { testNoOrphans(t, "on") })
	t.Run("no-cgroup", func(t *testing.T) { testNoOrphans(t, "off") })
}

func testNoOrphans(t *testing.T, cgroup string) {
	needs.Postgres(t)
	src, want := orphanNB, []string{"sleep 1018", "sleep 1019", "sleep 1020", "postgres"}
	if cgroup == "on" {
		// A grandchild with neither the marker nor a process group of
		// ours: only the cgroup can find it.
		src = strings.Replace(src, "# %% load", "# %% hidden\nq = backend.process([\"env\", \"-i\", \"sh\", \"-c\", \"setsid sleep 1021 & wait\"])\n\n# %% load", 1)
		want = append(want, "sleep 1021")
	}
	nb := writeNB(t, src)
	mark := fmt.Sprintf("BENCHBOOK_ORPHAN_TEST=%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd := exec.Command(binary, "run", "-no-color", nb)
	cmd.Env = append(os.Environ(), mark, "BENCHBOOK_CGROUP="+cgroup)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killMarked(mark) }) // never leave the test's own processes behind
	deadline := time.Now().Add(90 * time.Second)
	var before map[string]string
	for {
		before = descendants(cmd.Process.Pid, mark)
		if allStarted(before, want) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the notebook's processes never all started: %v\n%s", before, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if cgroup == "on" && !inBenchbookCgroup(before) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Skip("cgroup v2 is not writable here: children ran without cgroups")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := time.Now()
	for {
		left := survivors(before, mark)
		if len(left) == 0 {
			t.Logf("%d descendants gone %v after SIGKILL", len(before), time.Since(killed).Round(time.Millisecond))
			return
		}
		if time.Since(killed) > 5*time.Second {
			t.Fatalf("%d of %d descendants still running 5s after benchbook's SIGKILL:\n%s",
				len(left), len(before), strings.Join(left, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// proc is what the test knows of one process: its parent, its identity
// (pid and start time, so a reused pid is not taken for a survivor), its
// command line and whether its environment holds the test's marker.
type proc struct {
	pid, ppid int
	id        string
	cmdline   string
	marked    bool
}

// procs reads every live process (zombies are dead: only their parent's wait is missing).
func procs(mark string) []proc {
	var out []proc
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		i := bytes.LastIndexByte(stat, ')')
		if err != nil || i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 20 || f[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		env, _ := os.ReadFile(filepath.Join(dir, "environ"))
		cl, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		out = append(out, proc{pid: pid, ppid: ppid, id: e.Name() + "@" + f[19],
			cmdline: strings.TrimSpace(string(bytes.ReplaceAll(cl, []byte{0}, []byte{' '}))),
			marked:  bytes.Contains(append(env, 0), []byte(mark+"\x00"))})
	}
	return out
}

// descendants maps the identity of every process below root, and of every
// process carrying mark, to its command line.
func descendants(root int, mark string) map[string]string {
	all := procs(mark)
	below := map[int]bool{root: true}
	for grew := true; grew; {
		grew = false
		for _, p := range all {
			if below[p.ppid] && !below[p.pid] {
				below[p.pid], grew = true, true
			}
		}
	}
	out := map[string]string{}
	for _, p := range all {
		if (below[p.pid] || p.marked) && p.pid != root {
			out[p.id] = p.cmdline
		}
	}
	return out
}

// survivors lists the processes of before still alive, and any process
// carrying mark.
func survivors(before map[string]string, mark string) []string {
	var left []string
	for _, p := range procs(mark) {
		if _, ok := before[p.id]; ok || p.marked {
			left = append(left, fmt.Sprintf("%d %s", p.pid, p.cmdline))
		}
	}
	return left
}

// allStarted says whether, for each of want, some process's command line
// starts with it.
func allStarted(procs map[string]string, want []string) bool {
	for _, w := range want {
		found := false
		for _, cmdline := range procs {
			found = found || strings.HasPrefix(cmdline, w)
		}
		if !found {
			return false
		}
	}
	return true
}

// inBenchbookCgroup says whether the processes run in cgroups benchbook made.
func inBenchbookCgroup(procs map[string]string) bool {
	for id := range procs {
		pid, _, _ := strings.Cut(id, "@")
		cg, _ := os.ReadFile(filepath.Join("/proc", pid, "cgroup"))
		if bytes.Contains(cg, []byte("/benchbook-")) {
			return true
		}
	}
	return false
}

// killMarked kills what the test started and left behind.
func killMarked(mark string) {
	for _, p := range procs(mark) {
		if p.marked {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}

// killOwnerScript runs the notebook $NB1, which starts a container and
// blocks, until it says so, then kills everything else in the pid
// namespace it is the first process of (benchbook, its reaper, its
// children: a CI job's cgroup kill).
const killOwnerScript = `"$BB" run -no-color "$NB1" > "$OUT1" 2>&1 &
i=0
until grep -q "run hold" "$OUT1"; do
  sleep 0.1; i=$((i+1))
  if [ $i -ge 600 ]; then echo "NEVER HELD"; cat "$OUT1"; exit 1; fi
done
kill -9 -1
sleep 0.5
`

// deadOwnerScript is the first process of a pid namespace: it runs the
// notebook $NB1, which starts a container and blocks, kills everything
// else in the namespace (benchbook, its reaper, its children: a CI job's
// cgroup kill), then runs the notebook $NB2, which has nothing to do with
// containers, and prints what that run said.
const deadOwnerScript = killOwnerScript + `echo "SECOND RUN"
"$BB" run -no-color "$NB2" 2>&1
`

// TestRunRemovesADeadBenchbooksContainer: benchbook run of any notebook
// removes the container a benchbook killed with its reaper left running,
// and prints the line saying so. In a pid namespace of its own
// (backendtest.InPidNamespace), so no other benchbook's sweep on the box
// can remove the container first: gone means this run removed it.
func TestRunRemovesADeadBenchbooksContainer(t *testing.T) {
	e, tool := backendtest.ToolEngine(t)
	name := fmt.Sprintf("bb-dead-owner-%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { e.Remove(context.Background(), name) })
	nb1 := writeNB(t, fmt.Sprintf(`# %%%% target
c = backend.container(%q, cmd = ["spin"], cpus = 0.1, ready = "log:ready", name = %q)

# %%%% hold
_c = c
r = workload.exec(["sleep", "60"], runs = 1, warmup = 0)
`, tool, name))
	nb2 := writeNB(t, "# %% a\nx = 1\nx\n")
	out, err := backendtest.InPidNamespace(t, []string{"BB=" + binary, "NB1=" + nb1, "NB2=" + nb2,
		"OUT1=" + filepath.Join(t.TempDir(), "out1")}, "sh", "-c", deadOwnerScript)
	_, second, held := strings.Cut(out, "SECOND RUN\n")
	if err != nil || !held {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := e.Inspect(context.Background(), name); err == nil {
		t.Errorf("the dead benchbook's container %s still runs after the next run:\n%s", name, second)
	}
	if !strings.Contains(second, "removed 1 container(s) that a benchbook now gone left running: "+name) {
		t.Errorf("the next run did not say it removed %s:\n%s", name, second)
	}
}
