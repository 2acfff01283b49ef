package procfs

import (
	"bufio"
	"cmp"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
)

// TCPListen is the state /proc/net/tcp gives a listening socket (the
// kernel's TCP_LISTEN).
const TCPListen = 0x0A

// TCPSocket is one line of /proc/net/tcp or tcp6: a TCP socket of this
// process's network namespace.
type TCPSocket struct {
	Port  int    // the local port
	State int    // the kernel's TCP state: 1 established, TCPListen, ...
	Inode uint64 // the socket's inode, as fstat and /proc/PID/fd name it
}

// TCPSockets lists the TCP sockets, IPv4 then IPv6, of this process's
// network namespace. A kernel without IPv6 has no tcp6 file: the IPv4
// sockets alone, no error. Otherwise a file that cannot be read gives the
// error, and the other file's sockets still come.
func TCPSockets() ([]TCPSocket, error) {
	var out []TCPSocket
	var first error
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if errors.Is(err, os.ErrNotExist) && file != "/proc/net/tcp" {
			continue
		}
		if err != nil {
			first = cmp.Or(first, err)
			continue
		}
		out = append(out, parseTCP(f)...)
		f.Close()
	}
	return out, first
}

// parseTCP reads the lines of /proc/net/tcp (proc(5)): "sl local_address
// rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
// ...", addresses as hex "ADDR:PORT", the state in hex. The header, and a
// line that does not parse, are left out.
func parseTCP(r io.Reader) []TCPSocket {
	var out []TCPSocket
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		port, err1 := strconv.ParseUint(hexPort, 16, 16)
		state, err2 := strconv.ParseUint(f[3], 16, 8)
		inode, err3 := strconv.ParseUint(f[9], 10, 64)
		if ok && err1 == nil && err2 == nil && err3 == nil {
			out = append(out, TCPSocket{Port: int(port), State: int(state), Inode: inode})
		}
	}
	return out
}

// SocketInodes are the inodes of the sockets process pid holds open (its
// descriptors that link to "socket:[INODE]"); the error is that of
// listing /proc/PID/fd (another user's process, a gone one). A descriptor
// closed meanwhile is left out.
func SocketInodes(pid int) ([]uint64, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	fds, err := os.ReadDir(dir)
	var out []uint64
	for _, fd := range fds {
		link, err := os.Readlink(dir + fd.Name())
		inode, ok := strings.CutPrefix(link, "socket:[")
		if err != nil || !ok {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSuffix(inode, "]"), 10, 64); err == nil {
			out = append(out, n)
		}
	}
	return out, err
}
