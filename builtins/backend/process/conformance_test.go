package process

import (
	"strconv"
	"testing"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/builtins/internal/docker/dockertest"
)

// The process under test is the test tool (a static Go binary) serving
// HTTP: real requests, real CPU for its figures.
func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Kind{
		Name:    "process",
		Handle:  (*Handle)(nil),
		Modules: modules,
		Vars: func(t *testing.T) map[string]string {
			return map[string]string{"TOOL": dockertest.ToolBinary(t), "PORT": strconv.Itoa(backendtest.FreePort(t))}
		},
		Start:  `h = backend.process([TOOL], env = {"PORT": PORT}, ready = "http://127.0.0.1:%s/" % PORT)`,
		Load:   `workload.http(h.url + "/", clients = 2, duration = "1s", warmup = "0s")`,
		Figure: "server_cpu_us",
		Secret: `h = backend.process([TOOL, "printenv", "API_TOKEN"], env = {"API_TOKEN": WORD}, ready = "log:^ready$")`,
		Show:   `h.logs()`,
		Fail:   `backend.process([TOOL, "printenv", "API_TOKEN", "3"], env = {"API_TOKEN": WORD}, ready = "log:^ready$")`,
	})
}
