package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// TestVersionNamesTheRevision: a test binary (like go run) carries no VCS
// stamp; the version must still name the source tree's revision, checked
// against git itself. Built with -trimpath (as .ci/test builds), the
// binary no longer knows which tree it came from: it must then say "dev"
// and name no revision at all.
func TestVersionNamesTheRevision(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	status, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	want := "dev-" + strings.TrimSpace(string(head))[:12]
	if len(bytes.TrimSpace(status)) > 0 {
		want += "-dirty"
	}
	var out bytes.Buffer
	if err := cmdVersion(context.Background(), &out, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	if trimmed() {
		want = "dev"
	}
	if !strings.HasPrefix(out.String(), "benchbook "+want+" ") {
		t.Errorf("version printed %q, want it to start with %q", out.String(), "benchbook "+want)
	}
}

// trimmed reports whether this test binary was built with -trimpath.
func trimmed() bool {
	info, ok := debug.ReadBuildInfo()
	return ok && slices.Contains(info.Settings, debug.BuildSetting{Key: "-trimpath", Value: "true"})
}

// TestRevisionOfTheSourceTree: what a go run or go test binary (in a
// go-build dir) compiled from this directory names, against git itself,
// whichever way this test binary was built; an installed binary, or a
// -trimpath file name, names nothing.
func TestRevisionOfTheSourceTree(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	status, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	wd, _ := os.Getwd()
	file := filepath.Join(wd, "version.go")
	rev, dirty := revisionOf(filepath.Join(os.TempDir(), "go-build123", "b001", "exe", "benchbook"), file)
	if rev != strings.TrimSpace(string(head)) || dirty != (len(bytes.TrimSpace(status)) > 0) {
		t.Errorf("revisionOf = %q dirty %v; git says %s, status %q", rev, dirty, head, status)
	}
	if rev, _ := revisionOf("/usr/local/bin/benchbook", file); rev != "" {
		t.Errorf("an installed binary names revision %s", rev)
	}
	if rev, _ := revisionOf(filepath.Join(os.TempDir(), "go-build1", "benchbook"), "github.com/benchbook/benchbook/cmd/benchbook/version.go"); rev != "" {
		t.Errorf("a -trimpath file name names revision %s", rev)
	}
}
