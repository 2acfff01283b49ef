package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/docker"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

var (
	pgOnce sync.Once
	pgRef  string
	pgErr  error
)

// Postgres builds, unless the engine has it already, an image of the host's PostgreSQL
// ("benchbook-test/postgres-host:15"): its bin, lib and share dirs, the
// shared libraries they link (ldd), time zones, and PATH set to its bin.
func Postgres(t testing.TB, e *docker.Engine) string {
	t.Helper()
	bin := needs.Postgres(t)
	pgOnce.Do(func() { pgRef, pgErr = buildPostgres(e, bin) })
	if pgErr != nil {
		t.Fatalf("build the PostgreSQL image: %v", pgErr)
	}
	return pgRef
}

func buildPostgres(e *docker.Engine, bin string) (string, error) {
	base := filepath.Dir(bin) // /usr/lib/postgresql/15
	version := filepath.Base(base)
	ref := "benchbook-test/postgres-host:" + version
	ctx0, cancel0 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel0()
	if _, err := e.ImageDigest(ctx0, ref); err == nil {
		return ref, nil // the host's PostgreSQL changes with a package upgrade only: remove the image then
	}
	files, err := postgresFiles(base, version)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := writeTar(&buf, files); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	changes := []string{"ENV PATH=" + bin + ":/usr/bin:/bin", "ENV LANG=C"}
	return ref, e.Import(ctx, &buf, ref, changes)
}

// postgresFiles lists every file the image needs.
func postgresFiles(base, version string) ([]string, error) {
	var files []string
	for _, root := range []string{base, "/usr/share/postgresql/" + version, "/usr/share/zoneinfo"} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return err
		})
		if err != nil && root != "/usr/share/zoneinfo" {
			return nil, err
		}
	}
	files = append(files, "/bin/sh") // initdb runs "postgres -V" through popen
	libs := map[string]bool{}
	for _, f := range files {
		if f == "/bin/sh" || strings.HasPrefix(f, base+"/bin/") || strings.HasSuffix(f, ".so") {
			if err := lddInto(f, libs); err != nil {
				return nil, err
			}
		}
	}
	for l := range libs {
		files = append(files, l)
	}
	sort.Strings(files)
	return files, nil
}

// lddInto adds the shared libraries (and the loader) that f links.
func lddInto(f string, libs map[string]bool) error {
	out, err := exec.Command("ldd", f).Output()
	if err != nil {
		return nil // not a dynamic executable
	}
	for _, l := range strings.Split(string(out), "\n") {
		for _, field := range strings.Fields(l) {
			if strings.HasPrefix(field, "/") {
				libs[field] = true
			}
		}
	}
	return nil
}

// writeTar writes files (symlinks followed) with /tmp and /var/run.
func writeTar(w io.Writer, files []string) error {
	tw := tar.NewWriter(w)
	for _, d := range []string{"tmp/", "var/run/postgresql/", "etc/"} {
		if err := tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o1777}); err != nil {
			return err
		}
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil || fi.IsDir() { // a link to a directory (zoneinfo/posix/Africa)
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read %s: %w", f, err)
		}
		h := &tar.Header{Name: strings.TrimPrefix(f, "/"), Mode: int64(fi.Mode().Perm()), Size: int64(len(data))}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	return tw.Close()
}
