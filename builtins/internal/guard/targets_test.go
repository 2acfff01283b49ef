package guard

import (
	"net"
	"os"
	"os/exec"
	"slices"
	"testing"
)

// TestSocketsServeWhatTheTargetListensOn: a port this process listens on
// (IPv4 and IPv6 loopback) is served by this process and found among its
// ListenPorts, and remembered by Note once the listener is closed; a
// child that holds no socket serves none of them, and a port no one
// listens on is served by no one.
func TestSocketsServeWhatTheTargetListensOn(t *testing.T) {
	self := []int{os.Getpid()}
	child := exec.Command("sleep", "5")
	if err := child.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	other := []int{child.Process.Pid}

	var ports []int
	var dests []Dest
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s: %v", addr, err)
			continue
		}
		defer ln.Close()
		a := ln.Addr().(*net.TCPAddr)
		ports = append(ports, a.Port)
		dests = append(dests, Dest{Host: a.IP.String(), Port: a.Port})
	}
	var noted Sockets
	noted.Note(self)
	for _, d := range dests {
		if !Listens(self, d.Port) || !slices.Contains(ListenPorts(self), d.Port) {
			t.Errorf("this process listens on %d: Listens %v, ListenPorts %v", d.Port, Listens(self, d.Port), ListenPorts(self))
		}
		var s, o Sockets
		if !s.Serves(d, self) {
			t.Errorf("this process does not serve %+v", d)
		}
		if o.Serves(d, other) || slices.Contains(ListenPorts(other), d.Port) {
			t.Errorf("a child holding no socket serves %+v", d)
		}
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	var s Sockets
	if s.Serves(Dest{Host: "127.0.0.1", Port: gone}, self) {
		t.Errorf("the closed port %d is served", gone)
	}
	for _, d := range dests {
		if !noted.Serves(d, other) {
			t.Errorf("Note forgot %+v", d)
		}
	}
}
