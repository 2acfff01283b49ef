package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/child"
)

// copyDir copies a stopped data dir (a snapshot, a restore) so that to is
// at every moment either its old content whole or the new one whole: the
// copy is made beside it (to.new), the old one moved aside (to.old), the
// new one renamed in, the old one removed. Copying in place removed to and
// then copied: a SIGINT in between left a partial, root-owned 0700 data
// dir that every later run failed to start. A copy that a kill cut short
// is finished or undone by the next copy or start (recoverCopy). Owners
// and modes are kept (cp -a); on a file system that shares extents (XFS,
// Btrfs) the copy is a reflink and takes no time or room.
func copyDir(ctx context.Context, from, to string) error {
	return replaceDir(ctx, from, to, cpA)
}

// saveSnapshot copies the stopped data dir from into snapshot to, as
// copyDir does, except that a file base (an older snapshot of the same
// cluster: the one the data was restored from or last saved as) holds
// unchanged is hard-linked from base rather than copied. Snapshots are
// only ever read (a restore copies their files out or keeps the data
// dir's own, restoreSnapshot; a new snapshot of the same name is a new
// directory renamed over the old), so sharing their files is safe, and a state that changed one table costs that
// table's files and the WAL, not the ~1,000 files of a whole cluster.
// base "" copies everything.
func saveSnapshot(ctx context.Context, from, to, base string) error {
	if base == "" {
		return copyDir(ctx, from, to)
	}
	return replaceDir(ctx, from, to, func(ctx context.Context, from, tmp string) error {
		return copySharingOr(ctx, from, tmp, base)
	})
}

// restoreSnapshot puts snapshot from back as the stopped data dir to, as
// copyDir does, except that a file the data dir holds in the same version
// (same size, modification time, mode and owner: it was copied from that
// snapshot, or the snapshot from it, and not written since) is kept: the
// new data dir links it from the old one, which is then removed, so no
// file of the data dir is ever a snapshot's.
func restoreSnapshot(ctx context.Context, from, to string) error {
	return replaceDir(ctx, from, to, func(ctx context.Context, from, tmp string) error {
		if _, err := os.Stat(to); err != nil {
			return cpA(ctx, from, tmp)
		}
		return copySharingOr(ctx, from, tmp, to)
	})
}

// replaceDir puts a copy of from (made by cp) in place of to, whole or not
// at all (see copyDir).
func replaceDir(ctx context.Context, from, to string, cp func(ctx context.Context, from, to string) error) error {
	if err := recoverCopy(to); err != nil {
		return err
	}
	tmp, old := to+copyNew, to+copyOld
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	copyStep("begin", to)
	if err := cp(ctx, from, tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	copyStep("copied", to)
	if err := os.Rename(to, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		os.RemoveAll(tmp)
		return err
	}
	copyStep("aside", to)
	if err := os.Rename(tmp, to); err != nil {
		return err // recoverCopy puts it right: to.new is whole
	}
	copyStep("renamed", to)
	return os.RemoveAll(old)
}

// cpA copies from to to with cp -a (owners, modes, times kept; a reflink
// where the file system shares extents); its error carries cp's words.
func cpA(ctx context.Context, from, to string) error {
	cmd := exec.CommandContext(ctx, "cp", "-a", "--reflink=auto", from, to)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := child.Run(cmd); err != nil {
		return fmt.Errorf("cp -a %s: %v: %s", from, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// The names of a copy's two sides, beside its destination.
const (
	copyNew = ".new"
	copyOld = ".old"
)

// copyStep is called after each step of copyDir; tests interrupt a copy
// there (a cancelled context, a SIGKILL of the process).
var copyStep = func(step, to string) {}

// recoverCopy finishes or undoes a copy into to that a kill cut short:
//
//   - to is there: it is whole (only a whole copy is renamed in); a
//     to.new beside it was cut short, a to.old is the last one's leftover;
//   - to is missing, to.old and to.new are there: the kill came between
//     the renames, after the copy finished: to.new is renamed in;
//   - to is missing with only to.new: the first copy into to was cut
//     short: nothing was there before, nothing is.
func recoverCopy(to string) error {
	tmp, old := to+copyNew, to+copyOld
	_, errTo := os.Lstat(to)
	_, errOld := os.Lstat(old)
	_, errTmp := os.Lstat(tmp)
	if errors.Is(errTo, os.ErrNotExist) && errOld == nil {
		if errTmp == nil {
			if err := os.Rename(tmp, to); err != nil {
				return fmt.Errorf("finish the copy into %s cut short: %w", to, err)
			}
		} else if err := os.Rename(old, to); err != nil { // cannot happen in order; keep what there is
			return fmt.Errorf("put back %s: %w", to, err)
		}
	}
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	return os.RemoveAll(old)
}

// errNotPlain is a tree copySharing does not copy: it holds a FIFO, a
// socket, a device.
var errNotPlain = errors.New("neither a directory, a regular file nor a symbolic link")

// copySharingOr is copySharing, or cp -a of the whole tree when it holds
// files of other types (which cp -a copies as they are).
func copySharingOr(ctx context.Context, from, to, base string) error {
	err := copySharing(ctx, from, to, base)
	if errors.Is(err, errNotPlain) {
		if err := os.RemoveAll(to); err != nil {
			return err
		}
		return cpA(ctx, from, to)
	}
	return err
}

// copySharing copies the tree from to to (which must not exist) keeping
// owners, modes and modification times, as cp -a does. A regular file
// that base holds at the same path with the same size, modification time
// (to the nanosecond), mode and owner is the same version of the file and
// is hard-linked from base: PostgreSQL sets a file's time whenever it
// writes it, and the copies benchbook makes keep the time they copied
// (cp -a, here). Anything but directories, regular files and symbolic
// links is refused (errNotPlain).
func copySharing(ctx context.Context, from, to, base string) error {
	type dirTimes struct {
		path string
		fi   os.FileInfo
	}
	var dirs []dirTimes
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		if st == nil {
			return fmt.Errorf("%s: no owner", path)
		}
		switch {
		case fi.IsDir():
			if err := os.Mkdir(dst, 0o700); err != nil {
				return err
			}
			dirs = append(dirs, dirTimes{dst, fi})
			return keepOwnerMode(dst, fi, st)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, dst); err != nil {
				return err
			}
			return os.Lchown(dst, int(st.Uid), int(st.Gid))
		case fi.Mode().IsRegular():
			if sameVersion(fi, st, filepath.Join(base, rel)) && os.Link(filepath.Join(base, rel), dst) == nil {
				return nil // else (another file system, a link limit) a copy
			}
			if err := copyFile(path, dst); err != nil {
				return err
			}
			if err := keepOwnerMode(dst, fi, st); err != nil {
				return err
			}
			return os.Chtimes(dst, statAtime(st), fi.ModTime())
		default:
			return fmt.Errorf("%s: a %s: %w", path, fi.Mode().Type(), errNotPlain)
		}
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- { // children first: creating them set their parents' times
		os.Chtimes(dirs[i].path, dirs[i].fi.ModTime(), dirs[i].fi.ModTime())
	}
	return nil
}

// sameVersion reports whether the regular file at other has fi's size,
// modification time, mode and owner (st).
func sameVersion(fi os.FileInfo, st *syscall.Stat_t, other string) bool {
	ofi, err := os.Lstat(other)
	if err != nil || !ofi.Mode().IsRegular() {
		return false
	}
	ost, _ := ofi.Sys().(*syscall.Stat_t)
	return ost != nil && ofi.Size() == fi.Size() && ofi.ModTime().Equal(fi.ModTime()) &&
		ofi.Mode() == fi.Mode() && ost.Uid == st.Uid && ost.Gid == st.Gid
}

// keepOwnerMode gives dst the owner and mode of the file fi describes.
func keepOwnerMode(dst string, fi os.FileInfo, st *syscall.Stat_t) error {
	if err := os.Lchown(dst, int(st.Uid), int(st.Gid)); err != nil {
		return err
	}
	return os.Chmod(dst, fi.Mode().Perm())
}

func statAtime(st *syscall.Stat_t) time.Time { return time.Unix(st.Atim.Sec, st.Atim.Nsec) }

// copyFile copies a regular file's bytes into a new file dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
