package limits

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadFileRefusesWhatNeverEnds: /dev/zero, a FIFO with no writer and a
// directory are refused at once with an error naming the path; before, a
// FIFO blocked forever and /dev/zero was read until the kernel killed us.
func TestReadFileRefusesWhatNeverEnds(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe.star")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, kind string }{
		{"/dev/zero", "a character device"},
		{fifo, "a FIFO"},
		{t.TempDir(), "a directory"},
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(tc.path, File); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.kind) {
				t.Errorf("%s: err = %v", tc.path, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadFile still reading after 5s", tc.path)
		}
		if err := Regular(tc.path); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Regular(%s) = %v", tc.path, err)
		}
	}
}

// TestReadFileSizeLimit: a file over the limit is refused naming the
// variable; setting the variable lets it through.
func TestReadFileSizeLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(path, make([]byte, 3000), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(File.Env, "2K")
	_, err := ReadFile(path, File)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "BENCHBOOK_MAX_FILE") || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v", err)
	}
	t.Setenv(File.Env, "3000")
	if data, err := ReadFile(path, File); err != nil || len(data) != 3000 {
		t.Fatalf("at the limit: %d bytes, %v", len(data), err)
	}
	t.Setenv(File.Env, "nonsense")
	if File.Get() != File.Default {
		t.Errorf("a malformed variable gave %d", File.Get())
	}
	// Sizes are read as everywhere else (runtime/bytesize): "64MB" was
	// malformed here, so the default stood.
	for in, want := range map[string]int64{"64MB": 64 << 20, "64M": 64 << 20, "1GiB": 1 << 30, "2kb": 2048} {
		t.Setenv(File.Env, in)
		if got := File.Get(); got != want {
			t.Errorf("%s=%s: %d, want %d", File.Env, in, got, want)
		}
	}
}

// TestDepthIsCapped: raising the depth limit stops at its cap, past which
// the recursive walks overflowed Go's stack (3 million levels crashed).
func TestDepthIsCapped(t *testing.T) {
	t.Setenv(Depth.Env, "10000000")
	if got := Depth.Get(); got != Depth.Max {
		t.Errorf("%s=10000000 gives %d, want the cap %d", Depth.Env, got, Depth.Max)
	}
	t.Setenv(Depth.Env, "5000")
	if got := Depth.Get(); got != 5000 {
		t.Errorf("%s=5000 gives %d", Depth.Env, got)
	}
}
