package limits

import (
	"errors"
	"fmt"
	"io"
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
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(path, st); err != nil {
		return nil, err
	}
	max := l.Get()
	if st.Size() > max {
		return nil, tooLarge(path, st.Size(), l)
	}
	data, err := io.ReadAll(io.LimitReader(filehash.NoWait(f), max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, tooLarge(path, int64(len(data)), l)
	}
	return data, nil
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
