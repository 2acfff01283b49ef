package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/testsupport/httpget"
)

// watchNotebook: a -> b -> c is a chain, d stands alone.
const watchNotebook = `# %% a
a = 1

# %% b
b = a + 10

# %% c
c = b * 2
c

# %% d
d = "independent"
`

// lines collects a stream's lines for the test to wait on.
type lines struct {
	t  *testing.T
	ch chan string
}

func readLines(t *testing.T, r io.Reader) *lines {
	l := &lines{t: t, ch: make(chan string, 100)}
	go func() {
		defer close(l.ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			l.ch <- sc.Text()
		}
	}()
	return l
}

// next returns the next line starting with prefix, skipping others.
func (l *lines) next(prefix string, timeout time.Duration) string {
	l.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-l.ch:
			if !ok {
				l.t.Fatalf("output ended before a line starting %q", prefix)
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-deadline:
			l.t.Fatalf("no line starting %q within %v", prefix, timeout)
		}
	}
}

// TestWatch edits the notebook under watch and checks that exactly the
// edited cell and its dependents rerun, and that the served page learns of
// the new record.
func TestWatch(t *testing.T) {
	nb := writeNotebook(t, watchNotebook)
	cmd := exec.Command(binary, "watch", nb, "-serve", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out, errs := readLines(t, stdout), readLines(t, stderr)

	url := strings.TrimSuffix(strings.TrimPrefix(out.next("serving ", 10*time.Second), "serving "), "/")
	if got := out.next("ran: ", 10*time.Second); got != "ran: a, b, c, d" {
		t.Errorf("first run: %q, want every cell", got)
	}
	out.next("watching ", 5*time.Second)

	page := httpget.OK(t, url+"/")
	if !strings.Contains(page, `fetch("/version?since=`) || !strings.Contains(page, "connect-src 'self'") {
		t.Errorf("served page lacks the reload script or its CSP allowance")
	}
	onDisk, err := os.ReadFile(filepath.Join(filepath.Dir(nb), "nb.html"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(onDisk, []byte("/version")) {
		t.Errorf("the record file holds the reload script; only the served copy should")
	}
	version := httpget.OK(t, url+"/version")
	polled := make(chan string, 1)
	go func() { polled <- httpget.Body(url + "/version?since=" + version) }()

	edit(t, nb, strings.Replace(watchNotebook, "a + 10", "a + 100", 1))
	if got := out.next("", 10*time.Second); !strings.HasSuffix(got, " edited: b") {
		t.Errorf("after editing b: %q, want edited: b", got)
	}
	if got := out.next("ran: ", 10*time.Second); got != "ran: b, c" {
		t.Errorf("after editing b: %q, want ran: b, c", got)
	}
	select {
	case v := <-polled:
		if v == version {
			t.Errorf("version poll returned %q, the version before the edit", v)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("the page's version poll did not return after the record changed")
	}

	version = httpget.OK(t, url+"/version")
	edit(t, nb, watchNotebook+"\n# %% broken\nx = (\n")
	errs.next("(keeping the last version that parsed)", 10*time.Second)
	// The page must say so, not keep showing the old record silently.
	if v := httpget.Body(url + "/version?since=" + version); v == version {
		t.Errorf("the version did not change after a save that does not parse")
	}
	page = httpget.OK(t, url+"/")
	if !strings.Contains(page, `role="alert"`) || !strings.Contains(page, "nb.star:") || !strings.Contains(page, "last version that ran") {
		t.Errorf("served page does not show the syntax error:\n%.1500s", page)
	}
	edit(t, nb, watchNotebook)
	out.next("ran: ", 10*time.Second)
	out.next("wrote ", 10*time.Second)
	if page := httpget.OK(t, url+"/"); strings.Contains(page, `role="alert"`) {
		t.Error("the error banner stayed after the notebook was fixed")
	}

	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("watch ended with %v after Ctrl-C, want exit 0", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("watch still running 5s after SIGINT")
	}
}

func TestWatchRefusesNonLoopback(t *testing.T) {
	nb := writeNotebook(t, watchNotebook)
	for _, addr := range []string{"0.0.0.0:0", ":8000", "192.0.2.1:80"} {
		cmd := exec.Command(binary, "watch", nb, "-serve", addr)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "loopback") {
			t.Errorf("watch -serve %s: %v, %q; want exit 2 naming loopback", addr, err, stderr.String())
		}
	}
}

// edit saves src as an editor does, by renaming a new file into place, so
// the watcher never reads half a save.
func edit(t *testing.T, path, src string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
