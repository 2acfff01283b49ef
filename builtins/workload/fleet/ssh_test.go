package fleet_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/fleet/fleettest"
)

// testSSHD starts a private sshd on loopback (see fleettest.SSHD).
func testSSHD(t *testing.T) (client []string, sshdPid int) {
	return fleettest.SSHD(t, "127.0.0.1", nil, nil)
}

func fileSum(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestSSHFleetCopiesBinaryAndMerges(t *testing.T) {
	t.Parallel()
	client, _ := testSSHD(t)
	remote := t.TempDir() // the "remote" home for copied binaries
	s := &fleet.SSH{Hosts: []string{"root@127.0.0.1", "root@127.0.0.1"}, Command: client, Binary: os.Args[0], Dir: remote}
	l := fleettest.Load{Values: 5000, Seed: 11, Ms: 500, Windows: 1, DieAgent: -1}
	m, err := fleet.Run(context.Background(), s, fleettest.Specs(t, l, 2), opts(l))
	if err != nil {
		t.Fatal(err)
	}
	all, ok := fleettest.Oracle(l, []int{0, 1})
	fleettest.SameDistribution(t, m.Hist, all)
	if m.Count != ok || m.Incomplete {
		t.Fatalf("count %d want %d, rows %+v", m.Count, ok, m.Rows)
	}
	sum := fileSum(t, os.Args[0])
	copied := filepath.Join(remote, "benchbook-"+sum[:16])
	if fileSum(t, copied) != sum {
		t.Fatal("the copied binary differs from this one")
	}
	// A different build at the remote path is replaced.
	_ = os.WriteFile(copied, []byte("#!/bin/sh\necho stale build\n"), 0o755)
	if _, err := fleet.Run(context.Background(), s, fleettest.Specs(t, l, 2), opts(l)); err != nil {
		t.Fatal(err)
	}
	if fileSum(t, copied) != sum {
		t.Fatal("a remote binary with another hash was not replaced")
	}
	assertNoRemoteAgents(t, remote)
}

// One agent dies, then in a second run one loses its connection (its sshd
// session is killed); each is named, the other's data kept, and no remote
// agent process outlives its session.
func TestSSHFleetFaults(t *testing.T) {
	t.Parallel()
	client, sshd := testSSHD(t)
	remote := t.TempDir()
	s := &fleet.SSH{Hosts: []string{"root@127.0.0.1", "root@127.0.0.1"}, Command: client, Binary: os.Args[0], Dir: remote}
	l := fleettest.Load{Values: 2000, Seed: 12, Ms: 2500, Windows: 1, DieAgent: 1, DieMs: 400}
	m, err := fleet.Run(context.Background(), s, fleettest.Specs(t, l, 2), opts(l))
	if err != nil {
		t.Fatal(err)
	}
	if !m.Incomplete || m.Rows[0].Status != "ok" || m.Rows[1].Status != "died: exit status 3" {
		t.Fatalf("rows %q %q", m.Rows[0].Status, m.Rows[1].Status)
	}
	all, _ := fleettest.Oracle(l, []int{0})
	fleettest.SameDistribution(t, m.Hist, all)

	l.DieAgent = -1
	o := opts(l)
	var once sync.Once
	o.Progress = writerFunc(func(line []byte) { // mid-run: once an agent is half a second in
		if bytes.Contains(line, []byte("synthetic 0.5s")) {
			once.Do(func() { killOneSession(t, sshd, remote) })
		}
	})
	m, err = fleet.Run(context.Background(), s, fleettest.Specs(t, l, 2), o)
	if err != nil {
		t.Fatal(err)
	}
	var lost, good int
	for _, r := range m.Rows {
		switch {
		case strings.HasPrefix(r.Status, "lost its connection"):
			lost++
		case r.Status == "ok":
			good++
		}
	}
	if lost != 1 || good != 1 || !m.Incomplete {
		t.Fatalf("want one lost, one ok; rows %+v", m.Rows)
	}
	assertNoRemoteAgents(t, remote)
}

// killOneSession kills the sshd processes of one session whose agent runs
// from dir, leaving the agent itself: its connection is gone, as if the
// network between the machines had failed.
func killOneSession(t *testing.T, sshd int, dir string) {
	for _, mon := range children(sshd) {
		tree := descendants(mon)
		var agent bool
		for _, p := range tree {
			agent = agent || strings.Contains(cmdline(p), dir)
		}
		if !agent {
			continue
		}
		for _, p := range append([]int{mon}, tree...) {
			if !strings.Contains(cmdline(p), dir) {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
		return
	}
	t.Error("no sshd session with an agent found")
}

func children(pid int) []int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

func descendants(pid int) []int {
	var out []int
	for _, c := range children(pid) {
		out = append(append(out, c), descendants(c)...)
	}
	return out
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
}

// assertNoRemoteAgents waits a little for remote agents to see their
// session end, then fails if any process still runs from dir.
func assertNoRemoteAgents(t *testing.T, dir string) {
	t.Helper()
	assertNoRemoteAgentsWithin(t, dir, 5*time.Second)
}

func assertNoRemoteAgentsWithin(t *testing.T, dir string, d time.Duration) {
	t.Helper()
	var left []string
	for range int(d / (100 * time.Millisecond)) {
		left = nil
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if pid, err := strconv.Atoi(e.Name()); err == nil && strings.Contains(cmdline(pid), dir) {
				left = append(left, fmt.Sprintf("%d %s", pid, cmdline(pid)))
			}
		}
		if len(left) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("remote agents left behind: %q", left)
}

type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }
