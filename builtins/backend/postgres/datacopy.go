package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

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
	if err := recoverCopy(to); err != nil {
		return err
	}
	tmp, old := to+copyNew, to+copyOld
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	copyStep("begin", to)
	if err := cpA(ctx, from, tmp); err != nil {
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
