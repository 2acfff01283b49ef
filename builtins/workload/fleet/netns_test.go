package fleet_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/fleet/fleettest"
)

// Two network namespaces joined by a veth pair play two machines: the
// coordinator's ssh client runs in one, sshd and the agents in the other.
// The addresses exist only inside these namespaces, which the test deletes.
func netnsPair(t *testing.T) (local, remote []string, remoteAddr string, cut func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command: apt-get install iproute2")
	}
	tag := fmt.Sprintf("bbf%d", os.Getpid()%100000)
	nsL, nsR := tag+"l", tag+"r"
	run := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	t.Cleanup(func() { _ = run("netns", "del", nsL); _ = run("netns", "del", nsR) })
	steps := [][]string{
		{"netns", "add", nsL}, {"netns", "add", nsR},
		{"link", "add", tag + "a", "netns", nsL, "type", "veth", "peer", "name", tag + "b", "netns", nsR},
		{"-n", nsL, "addr", "add", "10.251.15.1/30", "dev", tag + "a"},
		{"-n", nsR, "addr", "add", "10.251.15.2/30", "dev", tag + "b"},
		{"-n", nsL, "link", "set", tag + "a", "up"}, {"-n", nsR, "link", "set", tag + "b", "up"},
		{"-n", nsL, "link", "set", "lo", "up"}, {"-n", nsR, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			t.Skipf("cannot make network namespaces here: %v", err)
		}
	}
	cut = func() { _ = run("-n", nsL, "link", "set", tag+"a", "down") }
	return []string{"ip", "netns", "exec", nsL}, []string{"ip", "netns", "exec", nsR}, "10.251.15.2", cut
}

// Agents across a veth pair merge as on one box; cutting the link mid-run
// names the agents it cut off, and they stop by themselves once they have
// heard nothing for the spec's silence.
func TestSSHFleetAcrossNamespaces(t *testing.T) {
	t.Parallel()
	local, remote, addr, cut := netnsPair(t)
	client, _ := fleettest.SSHD(t, addr, remote, local)
	dir := t.TempDir()
	s := &fleet.SSH{Hosts: []string{"root@" + addr, "root@" + addr}, Command: client, Binary: os.Args[0], Dir: dir}
	l := fleettest.Load{Values: 4000, Seed: 13, Ms: 500, Windows: 1, DieAgent: -1}
	m, err := fleet.Run(context.Background(), s, fleettest.Specs(t, l, 2), opts(l))
	if err != nil {
		t.Fatal(err)
	}
	all, ok := fleettest.Oracle(l, []int{0, 1})
	fleettest.SameDistribution(t, m.Hist, all)
	if m.Count != ok || m.Incomplete {
		t.Fatalf("count %d want %d, rows %+v", m.Count, ok, m.Rows)
	}

	l.Ms = 3000
	o := opts(l)
	o.Hang = 2 * time.Second
	var once bool
	o.Progress = writerFunc(func(line []byte) {
		if !once && strings.Contains(string(line), "synthetic 0.5s") {
			once = true
			cut()
		}
	})
	m, err = fleet.Run(context.Background(), s, fleettest.Specs(t, l, 2), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range m.Rows {
		if !strings.HasPrefix(r.Status, "hung: nothing from it for 2s") {
			t.Fatalf("row %s: %q, want hung (the link is down)", r.Name, r.Status)
		}
	}
	if !m.Incomplete {
		t.Fatal("a run with no agent left is not marked incomplete")
	}
	assertNoRemoteAgentsWithin(t, dir, 10*time.Second)
}
