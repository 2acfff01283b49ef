package container

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/docker"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/runtime"
)

// A program from build() runs in a container without a volumes bind
// (issue 52): backend.container(b) runs it in an image of its own that
// holds the static binary alone (FROM scratch), and cmd = [b, args...]
// runs it in the image given, bound in read-only, as the entrypoint. A
// dynamically linked binary needs its loader and C libraries: refused for
// an image of its own, and named in the error when it cannot start in
// another.

// programDir is where cmd's binaries are bound in the container.
const programDir = "/benchbook/bin"

// describer is a value that says what it is for the provenance (a
// binary: what was built, at which revision, how).
type describer interface{ Describe() string }

// binaryImage is an image of the static binary exe alone, its entrypoint:
// "benchbook-bin/NAME:SHA12", imported once and found by name after.
func binaryImage(ctx context.Context, eng *docker.Engine, exe handle.Executable) (string, error) {
	path := exe.Path()
	if hint := kit.DynamicHint(path); hint != "" {
		return "", fmt.Errorf("image: %s (or give an image that has them and cmd = [binary, ...])", hint)
	}
	sum, err := runtime.FileSHA256(path)
	if err != nil {
		return "", fmt.Errorf("image: %w", err)
	}
	name := imageName(filepath.Base(path))
	ref := "benchbook-bin/" + name + ":" + sum[:12]
	if _, err := eng.ImageDigest(ctx, ref); err == nil {
		return ref, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("image: %w", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data))}); err != nil {
		return "", err
	}
	if _, err := tw.Write(data); err != nil {
		return "", err
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	if err := eng.Import(ctx, &buf, ref, []string{fmt.Sprintf(`ENTRYPOINT ["/%s"]`, name)}); err != nil {
		return "", fmt.Errorf("image: %w", err)
	}
	return ref, nil
}

var notImageChars = regexp.MustCompile(`[^a-z0-9._-]+`)

// imageName is a file name as an image repository's last part
// (lowercase letters, digits, '.', '_', '-').
func imageName(base string) string {
	n := strings.Trim(notImageChars.ReplaceAllString(strings.ToLower(base), "-"), ".-_")
	if n == "" {
		return "program"
	}
	return n
}

// programs binds cmd's binaries into the container: each read-only at
// /benchbook/bin/NAME, in argv in its place; a binary first in cmd is the
// entrypoint (the image's own would otherwise be given it as an argument).
// It returns the host paths bound, for the error a failed start gives.
func programs(cmd starlark.Value, s *docker.Spec) []string {
	l, ok := cmd.(*starlark.List)
	if !ok {
		if exe, ok := cmd.(handle.Executable); ok {
			l = starlark.NewList([]starlark.Value{exe})
		} else {
			return nil
		}
	}
	var bound []string
	used := map[string]string{}
	for i := range l.Len() {
		exe, ok := l.Index(i).(handle.Executable)
		if !ok {
			continue
		}
		host := exe.Path()
		in := used[host]
		if in == "" {
			in = programDir + "/" + filepath.Base(host)
			for n := 2; taken(used, in); n++ {
				in = fmt.Sprintf("%s/%d/%s", programDir, n, filepath.Base(host))
			}
			used[host] = in
			s.Volumes[host] = in + ":ro"
			bound = append(bound, host)
		}
		s.Cmd[i] = in
	}
	if len(bound) > 0 {
		if _, first := l.Index(0).(handle.Executable); first {
			s.Entry, s.Cmd = s.Cmd[:1], s.Cmd[1:]
			if len(s.Cmd) == 0 {
				s.Cmd = nil
			}
		}
	}
	return bound
}

func taken(used map[string]string, in string) bool {
	for _, v := range used {
		if v == in {
			return true
		}
	}
	return false
}

// startHint is what a failed start adds about its programs: why a
// dynamically linked one may not have started.
func startHint(programs []string) string {
	var hints []string
	for _, p := range programs {
		if h := kit.DynamicHint(p); h != "" {
			hints = append(hints, h)
		}
	}
	if len(hints) == 0 {
		return ""
	}
	return "\n" + strings.Join(hints, "\n")
}
