package netpoll

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// RawConn is a net.Conn whose Read and Write make their read(2) and
// write(2) with syscall.RawSyscall, inside the poller's RawConn callbacks:
// waiting and deadlines stay the netpoller's, but the calls skip the
// runtime's entersyscall/exitsyscall. That matters for a load generator
// pinned to one core: every time all its workers wait for responses the
// runtime's sysmon thread goes to sleep, and the next ordinary syscall
// wakes it again (a futex wake and a context switch, about one per request
// in a closed loop). The sockets are non-blocking, so these calls never
// block the thread.
type RawConn struct {
	net.Conn
	rc syscall.RawConn

	readFn, writeFn func(fd uintptr) bool // bound once: no closure per call
	rd, wr          rawOp                 // apart: a read and a write may overlap (pgconn does)
	// Two reads (or two writes) may also overlap: net.Conn allows it, and
	// pgconn's asyncClose drains a connection its background reader reads.
	// The state above is per call, so each direction is one call at a time.
	rdMu, wrMu sync.Mutex
}

// rawOp is the state of the read or the write in progress.
type rawOp struct {
	buf []byte
	n   int
	err error
}

// NewRawConn wraps c if it exposes its file descriptor, and returns c as it
// is otherwise.
func NewRawConn(c net.Conn) net.Conn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	r := &RawConn{Conn: c, rc: rc}
	r.readFn, r.writeFn = r.doRead, r.doWrite
	return r
}

// SyscallConn exposes the socket, as net.TCPConn does: the SQL loop
// multiplexes many connections' descriptors in one epoll set.
func (r *RawConn) SyscallConn() (syscall.RawConn, error) { return r.rc, nil }

func (r *RawConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.rdMu.Lock()
	defer r.rdMu.Unlock()
	r.rd = rawOp{buf: p}
	err := r.rc.Read(r.readFn)
	n := r.rd.n
	if err == nil {
		err = r.rd.err
	}
	r.rd = rawOp{}
	switch {
	case err != nil:
		return n, r.opError("read", err)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (r *RawConn) doRead(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.rd.buf[0])), uintptr(len(r.rd.buf)))
		switch e {
		case 0:
			r.rd.n = int(n)
			return true
		case syscall.EAGAIN:
			return false // wait in the netpoller, then try again
		case syscall.EINTR:
			continue
		}
		r.rd.err = os.NewSyscallError("read", e)
		return true
	}
}

func (r *RawConn) Write(p []byte) (int, error) {
	r.wrMu.Lock()
	defer r.wrMu.Unlock()
	r.wr = rawOp{buf: p}
	err := r.rc.Write(r.writeFn)
	n := r.wr.n
	if err == nil {
		err = r.wr.err
	}
	r.wr = rawOp{}
	if err != nil {
		return n, r.opError("write", err)
	}
	return n, nil
}

func (r *RawConn) doWrite(fd uintptr) bool {
	w := &r.wr
	for w.n < len(w.buf) {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&w.buf[w.n])), uintptr(len(w.buf)-w.n))
		switch e {
		case 0:
			w.n += int(n)
		case syscall.EAGAIN:
			return false
		case syscall.EINTR:
		default:
			w.err = os.NewSyscallError("write", e)
			return true
		}
	}
	return true
}

// opError wraps err as net.Conn's own methods do, so timeouts, resets and
// closed connections Classify the same way.
func (r *RawConn) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		err = oe.Err // RawConn's "raw-read": keep the cause, name the op
	}
	return &net.OpError{Op: op, Net: r.LocalAddr().Network(), Source: r.LocalAddr(), Addr: r.RemoteAddr(), Err: err}
}

var errNoFD = errors.New("connection has no file descriptor")

// ConnFD is the descriptor under a connection: a RawConn, a net.TCPConn or a
// net.UnixConn, all of which expose it (a tls.Conn does not).
func ConnFD(c any) (int, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1, errNoFD
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	if err := rc.Control(func(f uintptr) { fd = int(f) }); err != nil {
		return -1, err
	}
	return fd, nil
}
