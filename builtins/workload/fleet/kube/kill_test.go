package kube_test

import (
	"context"
	"io"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/benchbook/benchbook/builtins/workload/fleet/fleettest"
)

// endless is a pod log that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '\n'
	}
	return len(p), nil
}
func (endless) Close() error { return nil }

// An agent whose output nobody reads any more (the coordinator gave up on
// it) still ends when it is killed: its log stream must not stay blocked
// writing into the pipe.
func TestKillWithoutReader(t *testing.T) {
	c := fake.NewClientset()
	k := newKubelet(t, c, nil)
	lc := launcher(c, k)
	lc.Logs = func(context.Context, string, string) (io.ReadCloser, error) { return endless{}, nil }
	l := fleettest.Load{Values: 10, Seed: 26, Ms: 20_000, Windows: 1, DieAgent: -1}
	agents, err := lc.Launch(context.Background(), fleettest.Specs(t, l, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close(context.Background())
	a := agents[0]
	time.Sleep(lc.Opts.StartAfter + 500*time.Millisecond) // the pod runs, its log fills the pipe
	a.Kill()
	done := make(chan error, 1)
	go func() { done <- a.Wait() }()
	select {
	case err := <-done:
		t.Logf("agent ended: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("a killed agent whose output nobody reads did not end in 10 s")
	}
}
