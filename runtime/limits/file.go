package limits

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/benchbook/benchbook/runtime/filehash"
)

// ErrTooLarge is wrapped by every error for an input over a size limit.
var ErrTooLarge = errors.New("over the limit")

// ErrNotRegular is wrapped by the error for a path that is not a regular
// file (a FIFO, a device, a directory, a socket): reading one may never end.
var ErrNotRegular = errors.New("not a regular file")

// ReadFile reads a regular file of at most l's size. A FIFO, a device or a
// directory is refused before it is read (a FIFO is opened without
// blocking), and so is a file over the limit, or one that grows past it
// while it is read, and a "regular" file whose read would wait for data
// (/proc/kmsg: filehash.ErrWouldBlock). Errors name the path.
func ReadFile(path string, l Limit) ([]byte, error) {
	// Plain system calls on the descriptor: through *os.File each open of
	// a regular file tried the netpoller (two fcntl and an epoll_ctl that
	// fails), and io.ReadAll grew its buffer from 512 bytes, a read per
	// doubling: 10 calls a file where 4 do, on the path that reads every
	// cache entry of a cached rerun (issue 38). O_NONBLOCK makes a FIFO's
	// open return at once and a read that would wait fail (EAGAIN).
	fd, err := openNoWait(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := ignoringEINTR(func() error { return syscall.Fstat(fd, &st) }); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if err := regularMode(path, st.Mode); err != nil {
		return nil, err
	}
	max := l.Get()
	if st.Size > max {
		return nil, tooLarge(path, st.Size, l)
	}
	// st.Size is a hint (a /proc file says 0, a file may grow): read to
	// the end, growing as needed, and refuse past max.
	data := make([]byte, 0, min(st.Size, max)+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := syscall.Read(fd, data[len(data):cap(data)])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return nil, fmt.Errorf("%s: %w", path, filehash.ErrWouldBlock)
		case err != nil:
			return nil, fmt.Errorf("%s: %w", path, os.NewSyscallError("read", err))
		case n == 0:
			return data, nil
		}
		data = data[:len(data)+n]
		if int64(len(data)) > max {
			return nil, tooLarge(path, int64(len(data)), l)
		}
	}
}

func openNoWait(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != syscall.EINTR {
			return err
		}
	}
}

// regularMode is regular for a raw stat's mode.
func regularMode(path string, mode uint32) error {
	if mode&syscall.S_IFMT == syscall.S_IFREG {
		return nil
	}
	var m fs.FileMode
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		m = fs.ModeDir
	case syscall.S_IFIFO:
		m = fs.ModeNamedPipe
	case syscall.S_IFCHR:
		m = fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		m = fs.ModeDevice
	case syscall.S_IFSOCK:
		m = fs.ModeSocket
	default:
		m = fs.ModeIrregular
	}
	return fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(m))
}

// Regular refuses a path that is not a regular file, following symlinks.
func Regular(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return regular(path, st)
}

func regular(path string, st fs.FileInfo) error {
	if st.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(st.Mode()))
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}

func tooLarge(path string, n int64, l Limit) error {
	return fmt.Errorf("%s: %w: %d bytes (%s)", path, ErrTooLarge, n, l.Hint())
}
