package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// cpuHog starts n busy loops that are not this process's descendants (the
// shell that starts them exits at once, so they are reparented), as another
// job on the box would be; they end by themselves after a minute and are
// killed with their process group when the test ends. They run at nice
// 19, as a batch job would: on a quiet box they still take every idle
// core, and beside the race pass's other packages (the box busy already)
// they take little of the CPU those need.
func cpuHog(t *testing.T, n int) {
	t.Helper()
	loop := `timeout --foreground 60 nice -n 19 sh -c 'while :; do :; done' >/dev/null 2>&1 &`
	cmd := exec.Command("sh", "-c", strings.Repeat(loop+" ", n))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) })
}

// TestBusyBoxInTheRecord (issue 32, case 7): a study run while another
// process keeps the box's cores busy carries the busy warning, with the
// figures, at the top of the record (under the verdict's decision row),
// in HTML and Markdown; nothing said so before. Since issue 52 it is one
// line for every run, said once, not a bullet per run. The server is this test's own process,
// observed, so only the hog is another job: without it, on a quiet box, the
// record says nothing of a busy box (checked by hand when this was written:
// unobserved, the race-built server's own CPU made every run busy, hog or
// not). Two pairs: the warning is every run's, not the comparison's.
func TestBusyBoxInTheRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end notebook run")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	cpuHog(t, 2)
	nb := writeNB(t, `# %% [markdown]
# # The same handler twice, on a busy box

# %% runs
load("@std/abab.star", "abab")
url = param("url", "")
host.observe(pid = param("server", 0)) # the server is this test's process: the measured system, not another job
def _one(arm):
    return workload.http(url + "/" + arm, clients = 2, duration = "1s", warmup = "0.1s")
exp = abab(arms = {"A": None, "B": None}, pairs = 2, run = _one)

# %% decision
rps = compare(exp, metric = "rps")
verdict(status = "open", headline = rps)
`)
	dir := filepath.Dir(nb)
	for _, format := range []string{"md", "html"} {
		// Through the built binary, and runs of 1 s: in the race pass, in
		// process, beside the hog at load 10, a run of 0.3 s completed no
		// request and compare rightly refused its rps of 0.
		runIn(t, dir, "run", "-no-color", "-format", format, "-p", "url="+srv.URL, "-p", fmt.Sprintf("server=%d", os.Getpid()), nb)
		page, err := os.ReadFile(filepath.Join(dir, "nb."+format))
		if err != nil {
			t.Fatal(err)
		}
		s := string(page)
		top, _, _ := strings.Cut(s, "def _one") // the first cell's code
		if !regexp.MustCompile(`BUSY BOX in [1-4] of 4 runs: other processes used [0-9.-]+ cores`).MatchString(top) {
			t.Errorf("%s: the top of the record lacks the busy box:\n%s", format, top)
		}
		if n := strings.Count(s, "BUSY BOX"); n != 1 {
			t.Errorf("%s: the busy box is said %d times, want once", format, n)
		}
		if n := strings.Count(strings.ToLower(s), "busy box:"); n != 0 {
			t.Errorf("%s: a run's own busy warning is shown %d times beside the one line", format, n)
		}
	}
}
