package guard

import (
	"context"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/benchbook/benchbook/runtime/procfs"
)

// Every live target the notebook started (a process, a container, a
// PostgreSQL cluster) is watched during every measured run, observed or
// not: a user who forgot observe = [...] measured a dead target, and the
// run said valid (7 ok, 344 refused). The death, OOM kill or restart of
// the target the run sends its traffic to is fatal, observed or not; any
// other target's trips are warnings on the run, observed or not. observe
// adds figures; it is not what turns the guard on (issue 33).

// A Target is a live system the notebook started.
type Target interface {
	Watcher
	// Watched is false once benchbook stopped it on purpose (.stop()):
	// a target the notebook ended is no one's guard.
	Watched() bool
	// Alive reports whether it runs now: a bystander that died before the
	// run had its trip in the run it died in.
	Alive() bool
	// Serves reports whether traffic sent to d reaches this target.
	Serves(d Dest) bool
}

// Dest is where a run sends its traffic: the handle it was given
// (workload.sql(pg, ...)), else the host and port of its URL, DSN or URI,
// or a unix socket's directory.
type Dest struct {
	Target any    // the value the run was given, when it is a handle
	Host   string // as written: "127.0.0.1", "localhost", "::1"
	Port   int
	Socket string // a DSN's host=/dir
}

// LocalPort reports whether d is port on this machine.
func (d Dest) LocalPort(port int) bool { return port > 0 && d.Port == port && Local(d.Host) }

// Targets is a session's live targets, in the order they started.
type Targets struct {
	mu   sync.Mutex
	list []Target
}

// TargetsKey names a session's Targets: runtime.SessionValue(th,
// guard.TargetsKey, guard.NewTargets).
var TargetsKey = targetsKey{}

type targetsKey struct{}

// NewTargets returns an empty registry.
func NewTargets() *Targets { return &Targets{} }

// Add registers a target the notebook started (once).
func (ts *Targets) Add(t Target) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !slices.Contains(ts.list, t) {
		ts.list = append(ts.list, t)
	}
}

// Watched are the targets not stopped on purpose.
func (ts *Targets) Watched() []Target {
	ts.mu.Lock()
	list := slices.Clone(ts.list)
	ts.mu.Unlock()
	var out []Target
	for _, t := range list {
		if t.Watched() {
			out = append(out, t)
		}
	}
	return out
}

// Bystander watches a target the run neither sends traffic to nor
// observes: its trips, all as warnings.
type Bystander struct{ Target Watcher }

// Watch watches the target and keeps its trips as warnings.
func (b Bystander) Watch(ctx context.Context, t0 time.Time) func() []Trip {
	stop := b.Target.Watch(ctx, t0)
	return func() []Trip {
		trips := stop()
		for i := range trips {
			if trips[i].Fatal {
				trips[i].Fatal = false
				trips[i].Evidence += " (not the target of this run's traffic)"
			}
		}
		return trips
	}
}

// Local reports whether host names this machine: loopback, an unspecified
// address, or an address of one of its interfaces.
func Local(host string) bool {
	h := strings.Trim(host, "[]")
	if h == "" || h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// Sockets remembers the ports a target's processes were seen listening
// on. A target found only by its socket (ready = "log:...") loses it when
// it dies: without the memory it would serve no port once dead, and the
// next run against that port would watch nothing. The zero value is ready.
type Sockets struct {
	mu    sync.Mutex
	ports map[int]bool
}

// Note remembers the ports pids listen on now (when the target is ready).
func (s *Sockets) Note(pids []int) {
	for _, p := range ListenPorts(pids) {
		s.add(p)
	}
}

// Serves reports whether d is a port on this machine that pids listen on
// now or were seen listening on before.
func (s *Sockets) Serves(d Dest, pids []int) bool {
	if d.Port <= 0 || !Local(d.Host) {
		return false
	}
	s.mu.Lock()
	seen := s.ports[d.Port]
	s.mu.Unlock()
	if seen {
		return true
	}
	if Listens(pids, d.Port) {
		s.add(d.Port)
		return true
	}
	return false
}

func (s *Sockets) add(port int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ports == nil {
		s.ports = map[int]bool{}
	}
	s.ports[port] = true
}

// Listens reports whether one of pids holds a TCP socket listening on port
// (/proc/net/tcp and tcp6, then the pids' descriptors): how a target whose
// ready check names no port is still found to serve a URL.
func Listens(pids []int, port int) bool {
	listening := listeningPorts()
	if !slices.Contains(slices.Collect(maps.Values(listening)), port) {
		return false // no one listens there: no descriptors to read
	}
	return slices.Contains(portsOf(pids, listening), port)
}

// ListenPorts are the TCP ports one of pids listens on.
func ListenPorts(pids []int) []int { return portsOf(pids, listeningPorts()) }

// portsOf are the ports of listening (inode -> port) whose sockets one of
// pids holds.
func portsOf(pids []int, listening map[uint64]int) []int {
	var out []int
	for _, pid := range pids {
		inodes, _ := procfs.SocketInodes(pid)
		for _, inode := range inodes {
			if p, ok := listening[inode]; ok && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// listeningPorts maps the inode of every listening TCP socket to its port.
func listeningPorts() map[uint64]int {
	out := map[uint64]int{}
	socks, _ := procfs.TCPSockets()
	for _, s := range socks {
		if s.State == procfs.TCPListen {
			out[s.Inode] = s.Port
		}
	}
	return out
}
