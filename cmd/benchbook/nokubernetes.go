//go:build !kubernetes

package main

import "github.com/benchbook/benchbook/builtins/workload"

// kubernetesLauncher is nil without -tags kubernetes (kubernetes.go): then
// workload.agents(kubernetes = ...) says how to build a benchbook that has
// it.
var kubernetesLauncher workload.KubernetesLauncher
