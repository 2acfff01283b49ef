// Command pause is the sandbox ("pause") container of bench/k8s's cluster:
// it holds a pod's namespaces open, reaps the zombies a pod with a shared
// PID namespace leaves it, and exits on SIGINT or SIGTERM, as the
// Kubernetes pause image does. A static Go binary, so the cluster needs no
// registry for it (cluster.sh builds it and imports it as an image).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			return
		}
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
