package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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

	page := get(t, url+"/")
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
	version := get(t, url+"/version")
	polled := make(chan string, 1)
	go func() { polled <- getQuiet(url + "/version?since=" + version) }()

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

	version = get(t, url+"/version")
	edit(t, nb, watchNotebook+"\n# %% broken\nx = (\n")
	errs.next("(keeping the last version that parsed)", 10*time.Second)
	// The page must say so, not keep showing the old record silently.
	if v := getQuiet(url + "/version?since=" + version); v == version {
		t.Errorf("the version did not change after a save that does not parse")
	}
	page = get(t, url+"/")
	if !strings.Contains(page, `role="alert"`) || !strings.Contains(page, "nb.star:") || !strings.Contains(page, "last version that ran") {
		t.Errorf("served page does not show the syntax error:\n%.1500s", page)
	}
	edit(t, nb, watchNotebook)
	out.next("ran: ", 10*time.Second)
	out.next("wrote ", 10*time.Second)
	if page := get(t, url+"/"); strings.Contains(page, `role="alert"`) {
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

func TestCheckLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8000": true, "[::1]:8000": true, "localhost:0": true, "127.1.2.3:1": true,
		"0.0.0.0:8000": false, ":8000": false, "example.com:80": false, "127.0.0.1": false,
	} {
		if err := checkLoopback(addr); (err == nil) != ok {
			t.Errorf("checkLoopback(%q) = %v, want ok=%v", addr, err, ok)
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

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	return string(body)
}

// getQuiet is get for goroutines other than the test's.
func getQuiet(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// TestRecordServer: a page waiting on /version learns of a publish at once;
// the served copy carries the script and a CSP that allows it by hash.
func TestRecordServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := startRecordServer(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	base := "http://" + s.addr
	record := `<html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"></head><body>r1</body></html>`
	s.publish([]byte(record))
	page := get(t, base+"/")
	if !strings.Contains(page, "script-src 'sha256-") || !strings.Contains(page, "<script>") || !strings.HasSuffix(page, "</script></body></html>") {
		t.Errorf("served page: %s", page)
	}
	var wg sync.WaitGroup
	polled := make(chan string, 3)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			polled <- getQuiet(base + "/version?since=1")
		}()
	}
	time.Sleep(100 * time.Millisecond) // the polls are waiting
	start := time.Now()
	s.publish([]byte(strings.Replace(record, "r1", "r2", 1)))
	wg.Wait()
	close(polled)
	for v := range polled {
		if v != "2" {
			t.Errorf("poll returned %q, want 2", v)
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("polls returned %v after the publish", took)
	}
	if !strings.Contains(get(t, base+"/"), "r2") {
		t.Error("the page is not the published one")
	}
}

// TestRecordServerRefusesForeignHosts: a page at a DNS name that an
// attacker rebinds to 127.0.0.1 reaches the server with its own name in
// Host: the server answered it, so that page could read the whole record.
// Only the loopback names and the address it listens on are served;
// net/http's client sends the Host header as a browser would.
func TestRecordServerRefusesForeignHosts(t *testing.T) {
	for _, listen := range []string{"127.0.0.1:0", "[::1]:0"} {
		ctx, cancel := context.WithCancel(context.Background())
		s, err := startRecordServer(ctx, listen)
		if err != nil {
			cancel()
			t.Logf("%s: %v", listen, err) // a host without IPv6
			continue
		}
		s.publish([]byte(`<html><body>the record</body></html>`))
		_, port, _ := net.SplitHostPort(s.addr)
		host, _, _ := net.SplitHostPort(s.addr)
		for hdr, want := range map[string]int{
			net.JoinHostPort(host, port):         200,
			"localhost:" + port:                  200,
			"LocalHost:" + port:                  200,
			net.JoinHostPort(host, "1"):          403, // another port: another server
			"rebind.attacker.example:" + port:    403,
			"localhost.attacker.example:" + port: 403,
			"127.0.0.1.attacker.example:" + port: 403,
		} {
			for _, path := range []string{"/", "/version"} {
				req, _ := http.NewRequest("GET", "http://"+s.addr+path, nil)
				req.Host = hdr
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatalf("%s Host %q: %v", path, hdr, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != want || (want != 200 && strings.Contains(string(body), "the record")) {
					t.Errorf("%s %s Host %q: %d %q, want %d", listen, path, hdr, resp.StatusCode, body, want)
				}
			}
		}
		s.close()
		cancel()
	}
}
