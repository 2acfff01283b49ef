package procfs

import (
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// inode is the socket's inode as fstat(2) gives it.
func inode(t *testing.T, c syscall.Conn) uint64 {
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	var serr error
	if err := raw.Control(func(fd uintptr) { serr = syscall.Fstat(int(fd), &st) }); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	return st.Ino
}

// TestTCPSocketsFindListenersAndConnections: listeners this test opens on
// loopback (IPv4, and IPv6 where there is one) are found with their port,
// the LISTEN state and the inode fstat gives their descriptor; a
// connection to one, on the client's port, is established; this
// process's SocketInodes hold the listeners'.
func TestTCPSocketsFindListenersAndConnections(t *testing.T) {
	type want struct {
		name string
		sock TCPSocket
	}
	var wants []want
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			if strings.HasPrefix(addr, "[") {
				t.Logf("no IPv6 loopback: %v", err)
				continue
			}
			t.Fatal(err)
		}
		defer ln.Close()
		l := ln.(*net.TCPListener)
		wants = append(wants, want{addr + " listener", TCPSocket{Port: l.Addr().(*net.TCPAddr).Port, State: TCPListen, Inode: inode(t, l)}})
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		tc := c.(*net.TCPConn)
		wants = append(wants, want{addr + " client", TCPSocket{Port: tc.LocalAddr().(*net.TCPAddr).Port, State: 1, Inode: inode(t, tc)}})
	}
	got, err := TCPSockets()
	if err != nil {
		t.Fatal(err)
	}
	held, err := SocketInodes(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wants {
		if !slices.Contains(got, w.sock) {
			t.Errorf("the %s %+v is not among the %d sockets of /proc/net/tcp*", w.name, w.sock, len(got))
		}
		if !slices.Contains(held, w.sock.Inode) {
			t.Errorf("SocketInodes(self) = %v misses the %s's inode %d", held, w.name, w.sock.Inode)
		}
	}
}

// TestParseTCP: the header and short or malformed lines are left out;
// port and state are hex, the inode decimal.
func TestParseTCP(t *testing.T) {
	const text = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12345 1 0000000000000000 100 0 0 10 0
   1: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 67890 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:ZZZZ 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1
   3: 0100007F:1F91 00000000:0000 0A
`
	got := parseTCP(strings.NewReader(text))
	want := []TCPSocket{{Port: 8080, State: TCPListen, Inode: 12345}, {Port: 54321, State: 1, Inode: 67890}}
	if !slices.Equal(got, want) {
		t.Errorf("parseTCP = %+v, want %+v", got, want)
	}
}
