package postgres

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/benchbook/benchbook/runtime/limits"
)

// As root, PostgreSQL runs as the "postgres" user (initdb and postgres
// refuse root): the data dir is that account's, and the resource dir's
// ancestors get o+x (traverse only) where they lack it.

// account is the user a child runs as; nil means benchbook's own user.
type account struct {
	uid, gid uint32
	name     string
}

// credential runs a child as the account as (nil: as benchbook). Everything
// else about how a child starts is child.Start's.
func credential(as *account) *syscall.SysProcAttr {
	if as == nil {
		return nil
	}
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: as.uid, Gid: as.gid}}
}

// unprivileged returns the account PostgreSQL runs as: "postgres" when we are
// root (initdb and postgres refuse root), nil otherwise.
func unprivileged() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs a 'postgres' user to run PostgreSQL as (apt-get install postgresql creates it): %w", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &account{uid: uint32(uid), gid: uint32(gid), name: u.Username}, nil
}

// chownTree gives dir and everything under it to as (no-op when as is nil).
func chownTree(dir string, as *account) error {
	if as == nil {
		return nil
	}
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(as.uid), int(as.gid))
	})
}

// openPath lets as traverse every ancestor of dir (adds o+x where missing,
// never read permission): a cache dir under a private home or t.TempDir()
// would otherwise be unreachable for the postgres user.
func openPath(dir string, as *account) error {
	if as == nil {
		return nil
	}
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o001); err != nil {
				return fmt.Errorf("let %s traverse %s: %w", as.name, d, err)
			}
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// tailFile returns the last n lines of a file.
func tailFile(path string, n int) []string {
	data, err := limits.ReadFile(path, limits.Record)
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if n > 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// lookBin finds a PostgreSQL program: in the Debian directories first, then
// on PATH.
func lookBin(name string) (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- { // newest version first
		p := filepath.Join(dirs[i], name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", errors.New("PostgreSQL's " + name + " not found (apt-get install postgresql)")
}
