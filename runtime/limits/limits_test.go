package limits

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/testsupport/timing"
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

func nested(depth int) starlark.Value {
	var v starlark.Value = starlark.NewList(nil)
	for range depth {
		v = starlark.NewList([]starlark.Value{v})
	}
	return v
}

// TestCheckValue: depth and size are bounded without recursion (six
// million levels are refused: recursion would overflow Go's stack), a
// cycle is found as depth, and the variables raise the limits.
func TestCheckValue(t *testing.T) {
	if err := CheckValue(nested(6_000_000)); !errors.Is(err, ErrTooDeep) || !strings.Contains(err.Error(), Depth.Env) {
		t.Fatalf("6M deep: %v", err)
	}
	if err := CheckValue(nested(999)); err != nil {
		t.Errorf("999 deep: %v", err)
	}
	t.Setenv(Depth.Env, "5000")
	if err := CheckValue(nested(4000)); err != nil {
		t.Errorf("4000 deep with the limit raised: %v", err)
	}
	cyc := starlark.NewList(nil)
	cyc.Append(cyc)
	if err := CheckValue(cyc); !errors.Is(err, ErrTooDeep) {
		t.Errorf("cycle: %v", err)
	}
	t.Setenv(Value.Env, "1M")
	big := starlark.String(strings.Repeat("x", 2<<20))
	if err := CheckValue(starlark.Tuple{big}); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), Value.Env) {
		t.Errorf("2 MB string under a 1M limit: %v", err)
	}
}

// TestCheckValueLinear: the check costs time linear in the value: six
// million levels are refused in well under a second (10 s leaves room for
// a busy box; under -race and load it took 11 s).
func TestCheckValueLinear(t *testing.T) {
	timing.Only(t, "timed: -race makes building and walking the value several times slower")
	v := nested(6_000_000)
	start := time.Now()
	if err := CheckValue(v); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("6M deep: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("6M deep took %v", d)
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
