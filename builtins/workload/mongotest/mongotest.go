// Package mongotest starts a real MongoDB wire-protocol server for tests. It
// is FerretDB (over SQLite in the test's temp dir) on a loopback port.
//
// No MongoDB is installable on the machines benchbook is tested on, and
// FerretDB's own command panics at start when installed from the module
// proxy (its embedded version file is empty). Embedded as a library it
// runs, so the nested module ferretserver wraps it; it stays out of the
// benchbook binary's dependencies. Start builds it once per change of its
// sources (go build into the user cache dir; the first build takes a few
// minutes, later ones are cached) and starts it for one test.
//
// FerretDB lacks some of MongoDB (opcounters, WiredTiger, index effects on
// its SQLite backend); Real returns BENCHBOOK_MONGO_URI for tests that need
// a real MongoDB, or skips.
package mongotest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/testsupport/srcdir"
)

// Real returns the URI of a real MongoDB (BENCHBOOK_MONGO_URI), or skips t.
func Real(t testing.TB) string {
	t.Helper()
	uri := os.Getenv("BENCHBOOK_MONGO_URI")
	if uri == "" {
		t.Skip("needs a real MongoDB (FerretDB lacks it): set BENCHBOOK_MONGO_URI=mongodb://... to run")
	}
	return uri
}

// Start builds (once) and starts a FerretDB server for t, stopped at its
// cleanup, and returns its URI (mongodb://127.0.0.1:PORT/).
func Start(t testing.TB) string {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatalf("mongotest: %v", err)
	}
	uri, stop, err := Run(bin, t.TempDir())
	if err != nil {
		t.Fatalf("mongotest: %v", err)
	}
	t.Cleanup(stop)
	return uri
}

// Run starts the server binary on data dir dir; stop kills it and waits.
// The server also dies with its parent (its stdin closes, and on Linux
// the kernel sends it SIGKILL).
func Run(bin, dir string) (uri string, stop func(), err error) {
	cmd := exec.Command(bin, "-dir", dir, "-stdin-exit")
	cmd.SysProcAttr = sysProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		s.Scan()
		line <- s.Text()
		for s.Scan() {
		}
	}()
	select {
	case l := <-line:
		if strings.HasPrefix(l, "mongodb://") {
			return l, stop, nil
		}
	case <-time.After(30 * time.Second):
	}
	stop()
	return "", nil, fmt.Errorf("ferretserver did not start: %s", stderr.String())
}

type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

var built struct {
	once sync.Once
	path string
	err  error
}

// Binary builds the server once per process and returns its path.
func Binary() (string, error) {
	built.once.Do(func() { built.path, built.err = build() })
	return built.path, built.err
}

// build compiles ferretserver into the user cache dir, keyed by the hash
// of its sources, unless a binary of those sources is there.
func build() (string, error) {
	here, err := srcdir.Caller()
	if err != nil {
		return "", err
	}
	src := filepath.Join(here, "ferretserver")
	key, err := sourceKey(src)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "benchbook", "ferretserver-"+key)
	bin := filepath.Join(dir, "ferretserver")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Five test packages start FerretDB and go test runs them side by
	// side: the first to come builds it, the others wait for its binary
	// instead of building the same thing at once (minutes of both cores).
	unlock, err := lockFile(filepath.Join(dir, "build.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	tmp := fmt.Sprintf("%s.%d", bin, os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, ".")
	cmd.Dir = src
	// The nested module's go.sum pins FerretDB's dependencies; no VCS
	// stamping (the tree may be a git worktree git refuses to read).
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=readonly -buildvcs=false"))
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("go build ferretserver: %w\n%s", err, out)
	}
	return bin, os.Rename(tmp, bin) // atomic: a parallel build's binary is the same
}

func sourceKey(dir string) (string, error) {
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum", "main.go"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// sysProcAttr kills the server with its parent where the kernel can.
func sysProcAttr() *syscall.SysProcAttr {
	return procAttr()
}
