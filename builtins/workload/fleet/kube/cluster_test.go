package kube_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/fleet/fleettest"
	"github.com/benchbook/benchbook/builtins/workload/fleet/kube"
)

// On a real cluster (KUBECONFIG set, and BENCHBOOK_AGENT_IMAGE an image
// built from builtins/workload/fleet/kube/deploy/Dockerfile at this commit): the Job's pods
// run the real agent, which refuses the simulated kind of load; that answer,
// read from every pod's log, proves create → watch → collect, and nothing
// may be left in the namespace afterwards.
func TestRealCluster(t *testing.T) {
	image := os.Getenv("BENCHBOOK_AGENT_IMAGE")
	if os.Getenv("KUBECONFIG") == "" || image == "" {
		t.Skip("set KUBECONFIG to a cluster and BENCHBOOK_AGENT_IMAGE to an agent image to run this")
	}
	c, ns, err := kube.Client()
	if err != nil {
		t.Fatal(err)
	}
	l := &kube.Launcher{Client: c, Opts: kube.Options{Namespace: ns, Image: image, StartAfter: 90 * time.Second, Deadline: 5 * time.Minute}}
	load := fleettest.Load{Values: 10, Seed: 1, Ms: 100, Windows: 1, DieAgent: -1}
	m, err := fleet.Run(context.Background(), l, fleettest.Specs(t, load, 2), fleet.Options{Duration: time.Second, Window: time.Second, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range m.Rows {
		if !strings.Contains(r.Status, "synthetic") {
			t.Errorf("agent %s: %q, want the agent's refusal of the simulated load", r.Name, r.Status)
		}
	}
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: "benchbook.dev/fleet=" + l.Name}
	jobs, _ := c.BatchV1().Jobs(ns).List(ctx, sel)
	secrets, _ := c.CoreV1().Secrets(ns).List(ctx, sel)
	cms, _ := c.CoreV1().ConfigMaps(ns).List(ctx, sel)
	if len(jobs.Items)+len(secrets.Items)+len(cms.Items) != 0 {
		t.Fatalf("left behind in %s: %d Jobs, %d Secrets, %d ConfigMaps", ns, len(jobs.Items), len(secrets.Items), len(cms.Items))
	}
}
