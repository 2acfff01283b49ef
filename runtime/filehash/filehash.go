// Package filehash is the hash of a file's content, in a leaf package of its
// own. The engine keys file inputs with it, and an agent (package fleet)
// checks the binary it copies to a remote host with it, without linking the
// engine (Starlark, goldmark, chroma).
package filehash

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// SHA256 is the hex SHA-256 of a regular file's content, read as a stream:
// the hash of every file-like input (notebook files, binaries, SQLite
// files). It opens without blocking and refuses what is not a regular file
// (a FIFO, a device), whose read may never end, even one swapped in after
// a caller checked the path; and a "regular" file whose read would wait
// for data (/proc/kmsg) fails with ErrWouldBlock instead of waiting.
func SHA256(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return "", err
	} else if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	h := sha256.New()
	if _, err := io.Copy(h, NoWait(f)); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ErrWouldBlock is a read that would wait for data that is not there: a
// file such as /proc/kmsg is "regular" by its mode, but a read of it waits
// for the next kernel message, for ever, deaf to SIGINT and SIGTERM.
var ErrWouldBlock = errors.New("its read would wait for data (a file such as /proc/kmsg): not read")

// NoWait reads f, opened with O_NONBLOCK, without ever waiting: a read
// that would block fails with ErrWouldBlock. Go parks a plain Read of a
// pollable descriptor until it is readable, which for /proc/kmsg may be
// never; a file on disk reads as usual (O_NONBLOCK means nothing to it).
func NoWait(f *os.File) io.Reader { return noWait{f} }

type noWait struct{ f *os.File }

func (r noWait) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	rc, err := r.f.SyscallConn()
	if err != nil {
		return r.f.Read(p)
	}
	var n int
	var rerr error
	if err := rc.Read(func(fd uintptr) bool {
		for {
			n, rerr = syscall.Read(int(fd), p)
			if rerr != syscall.EINTR {
				return true // never wait for readiness
			}
		}
	}); err != nil {
		return 0, err
	}
	switch {
	case rerr == syscall.EAGAIN:
		return 0, ErrWouldBlock
	case rerr != nil:
		return 0, rerr
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}
