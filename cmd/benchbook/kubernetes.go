//go:build kubernetes

package main

import (
	"fmt"
	"time"

	"github.com/benchbook/benchbook/builtins/workload"
	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/fleet/kube"
)

// With -tags kubernetes, workload.agents(kubernetes = {...}) works: the
// client-go it needs is left out of the default build (36 MB of binary,
// 20 MB of memory for every command). modules.go hands this to the
// workload module.
var kubernetesLauncher workload.KubernetesLauncher = launchKubernetes

func launchKubernetes(o, selector map[string]string, run time.Duration) (fleet.Launcher, error) {
	c, ns, err := kube.Client()
	if err != nil {
		return nil, err
	}
	if o["namespace"] != "" {
		ns = o["namespace"]
	}
	opts := kube.Options{Namespace: ns, Image: o["image"], CPU: o["cpu"], Memory: o["memory"], NodeSelector: selector,
		HostNetwork: o["host_network"] == "true"}
	if s := o["start_after"]; s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, fmt.Errorf("workload.agents: kubernetes: start_after: malformed duration %q", s)
		}
		opts.StartAfter = d
	}
	opts.Deadline = opts.StartAfter + run + 5*time.Minute
	return &kube.Launcher{Client: c, Opts: opts}, nil
}
