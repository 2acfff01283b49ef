// Package needs lets a test ask for a tool that .ci/run installs. Such tools
// are PostgreSQL and headless Chromium. On a developer's machine a missing
// tool skips the test with what to install; under CI (CI=true), where
// .ci/run has installed it, a missing tool fails the test, so a suite can
// never pass in CI by skipping everything it was meant to check.
package needs

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
)

// T is the part of testing.TB that needs uses.
type T interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// CI reports whether the tests run under CI, which sets CI=true.
func CI() bool {
	v := os.Getenv("CI")
	return v == "true" || v == "1"
}

// Missing stops t because what is not there: a skip on a developer's
// machine, a failure under CI. install says how to get it.
func Missing(t T, what, install string) {
	t.Helper()
	if CI() {
		t.Fatalf("%s not found, and CI=true: .ci/run installs it (%s), so this suite must not skip", what, install)
		return
	}
	t.Skipf("%s not found: %s to run this test", what, install)
}

// PostgresBinDir is the newest PostgreSQL's binaries directory, whatever
// its version (a machine with another version than ours must run the SQL
// tests, not skip them), or the directory of initdb on PATH; "" when there
// is none.
func PostgresBinDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// Postgres returns PostgreSQL's binaries directory. As root, clusters run
// as the postgres user, so it must exist too.
func Postgres(t T) string {
	t.Helper()
	dir := PostgresBinDir()
	if dir == "" {
		Missing(t, "PostgreSQL's binaries (/usr/lib/postgresql/*/bin)", "apt-get install postgresql postgresql-contrib")
		return ""
	}
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			Missing(t, "a postgres user to run clusters as", "apt-get install postgresql")
		}
	}
	return dir
}

// ChromiumPath is where Debian's chromium package puts the browser.
const ChromiumPath = "/usr/bin/chromium"

// Chromium returns the path of headless Chromium.
func Chromium(t T) string {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		Missing(t, ChromiumPath, "apt-get install chromium")
	}
	return ChromiumPath
}
