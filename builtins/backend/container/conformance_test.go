package container

import (
	"strconv"
	"testing"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
)

// The container under test is the test tool's image serving HTTP on the
// host's network, on the real engine.
func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Kind{
		Name:    "container",
		Handle:  (*Handle)(nil),
		Modules: modules,
		Vars: func(t *testing.T) map[string]string {
			return map[string]string{"IMAGE": toolImage(t), "PORT": strconv.Itoa(backendtest.FreePort(t))}
		},
		Start:  `h = backend.container(IMAGE, env = {"PORT": PORT}, ready = "http://127.0.0.1:%s/" % PORT)`,
		Load:   `workload.http(h.url + "/", clients = 2, duration = "1s", warmup = "0s")`,
		Figure: "server_cpu_cores",
		Secret: `h = backend.container(IMAGE, cmd = ["printenv", "API_TOKEN"], env = {"API_TOKEN": WORD}, ready = "log:^ready$")`,
		Show:   `h.logs()`,
		Fail:   `backend.container(IMAGE, cmd = ["printenv", "API_TOKEN", "3"], env = {"API_TOKEN": WORD}, ready = "log:^ready$")`,
	})
}
