// Package dockertest gives tests a running Docker engine and offline images.
//
// The images are built without a registry: a FROM-scratch image holding a
// static Go tool (tool/main.go), and a PostgreSQL image made of the host's
// own PostgreSQL files. Without an engine a test skips, or fails under CI
// (needs).
package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/docker"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
	"github.com/benchbook/benchbook/runtime/testsupport/srcdir"
)

// ToolImage is the test tool's image; its entrypoint is the tool.
const ToolImage = "benchbook-test/tool:1"

// Engine connects to the engine, or skips (fails under CI) without one.
func Engine(t testing.TB) *docker.Engine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := docker.Connect(ctx)
	if err != nil {
		needs.Missing(t, "a container engine ("+err.Error()+")", "apt-get install docker.io; dockerd &")
		return nil
	}
	t.Cleanup(func() { e.Close() })
	return e
}

var (
	toolOnce sync.Once
	toolErr  error
)

// Tool builds ToolImage once per test binary (it is rebuilt each time, so
// it is always this source's).
func Tool(t testing.TB, e *docker.Engine) string {
	t.Helper()
	toolOnce.Do(func() { toolErr = buildTool(e) })
	if toolErr != nil {
		t.Fatalf("build %s: %v", ToolImage, toolErr)
	}
	return ToolImage
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// ToolBinary builds the tool as a static executable for the host (a
// process target that needs no engine) and returns its path: in the user
// cache dir, named by the hash of its source, so it is built once per
// change of tool/main.go.
func ToolBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() { binPath, binErr = cachedTool() })
	if binErr != nil {
		t.Fatalf("build the test tool: %v", binErr)
	}
	return binPath
}

func cachedTool() (string, error) {
	here, err := srcdir.Caller()
	if err != nil {
		return "", err
	}
	src, err := os.ReadFile(filepath.Join(here, "tool", "main.go"))
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(src)
	bin := filepath.Join(cache, "benchbook-test", "tool-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	tmp := fmt.Sprintf("%s.%d", bin, os.Getpid()) // another test binary may build it at once
	if err := goBuildTool(tmp); err != nil {
		return "", err
	}
	return bin, os.Rename(tmp, bin)
}

// goBuildTool builds tool/main.go, static, into bin.
func goBuildTool(bin string) error {
	cmd := exec.Command("go", "build", "-o", bin, "github.com/benchbook/benchbook/builtins/internal/docker/dockertest/tool")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return &buildError{err, out}
	}
	return nil
}

func buildTool(e *docker.Engine) error {
	dir, err := os.MkdirTemp("", "bbtool-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "tool")
	if err := goBuildTool(bin); err != nil {
		return err
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "tool", Mode: 0o755, Size: int64(len(data))}); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return e.Import(ctx, &buf, ToolImage, []string{`ENTRYPOINT ["/tool"]`})
}

type buildError struct {
	err error
	out []byte
}

func (b *buildError) Error() string { return b.err.Error() + ": " + string(b.out) }

// Layer is a tar of one file f holding content: an image layer for
// docker import, different content a different image.
func Layer(content string) *bytes.Buffer {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "f", Mode: 0o644, Size: int64(len(content))}) //nolint:errcheck // a bytes.Buffer
	tw.Write([]byte(content))                                                      //nolint:errcheck
	tw.Close()                                                                     //nolint:errcheck
	return &buf
}
