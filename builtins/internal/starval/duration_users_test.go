package starval_test

import (
	"fmt"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend"
	"github.com/benchbook/benchbook/builtins/host"
	"github.com/benchbook/benchbook/builtins/workload"
)

// Every builtin that takes a duration refuses the same bad values with the
// same words: one parser, not one per module. The oracle is sameness: the
// message after `<builtin>: for parameter "<arg>": ` must not depend on the
// builtin, and must say which builtin and argument.
func TestEveryBuiltinReadsDurationsAlike(t *testing.T) {
	calls := []struct{ fn, arg, call string }{
		{"workload.http", "duration", `workload.http("http://127.0.0.1:1/", clients = 1, duration = %s)`},
		{"workload.http", "warmup", `workload.http("http://127.0.0.1:1/", clients = 1, duration = "1s", warmup = %s)`},
		{"workload.http", "timeout", `workload.http("http://127.0.0.1:1/", clients = 1, duration = "1s", timeout = %s)`},
		{"workload.http", "window", `workload.http("http://127.0.0.1:1/", clients = 1, duration = "1s", window = %s)`},
		{"workload.exec", "timeout", `workload.exec("true", timeout = %s)`},
		{"host.foreign_cpu", "interval", `host.foreign_cpu(interval = %s)`},
		{"host.gate", "wait", `host.gate(wait = %s)`},
		{"host.gate", "poll", `host.gate(poll = %s)`},
		{"backend.process", "ready_timeout", `backend.process("/nonexistent/benchbook-test", ready_timeout = %s)`},
	}
	globals := starlark.StringDict{"workload": workload.Module(workload.Options{}).Globals["workload"], "host": host.Module().Globals["host"], "backend": backend.Module().Globals["backend"]}
	for _, bad := range []string{`"1x"`, `"-1s"`, `-1`, `float("nan")`, `1e300`, `[]`} {
		messages := map[string]string{}
		for _, c := range calls {
			src := fmt.Sprintf(c.call, bad)
			_, err := starlark.Eval(&starlark.Thread{}, "t.star", src, globals)
			// UnpackArgs quotes a keyword argument's name.
			prefix := c.fn + `: for parameter "` + c.arg + `": `
			if err == nil || !strings.Contains(err.Error(), prefix) {
				t.Errorf("%s: got %v, want an error starting %q", src, err, prefix)
				continue
			}
			_, msg, _ := strings.Cut(err.Error(), prefix)
			messages[msg] = src
		}
		if len(messages) > 1 {
			t.Errorf("%s is refused in %d different words: %v", bad, len(messages), messages)
		}
	}
}
