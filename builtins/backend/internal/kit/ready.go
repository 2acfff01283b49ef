package kit

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/runtime/redact"
)

// CheckReady accepts "", "http://...", "tcp:PORT" and "log:REGEX".
func CheckReady(ready string) error {
	if ready != "" && !strings.HasPrefix(ready, "http://") && !strings.HasPrefix(ready, "https://") &&
		!strings.HasPrefix(ready, "tcp:") && !strings.HasPrefix(ready, "log:") {
		return fmt.Errorf(`ready must be "http://...", "tcp:PORT" or "log:REGEX", got %q`, ready)
	}
	if rest, ok := strings.CutPrefix(ready, "log:"); ok {
		if _, err := regexp.Compile(rest); err != nil {
			return fmt.Errorf("ready: %w", err)
		}
	}
	return nil
}

// ReadyBeforeStart is an error when the ready check (http, tcp) passes
// before the process or container it waits for has started: another
// server holds the port (an old one still running), and the check would
// take it for the new one, whose runs would then measure the old.
func ReadyBeforeStart(ready string) error {
	if ready == "" || strings.HasPrefix(ready, "log:") {
		return nil
	}
	if ReadyCheck(ready, nil)() {
		return fmt.Errorf("ready check %s passes before it started: another server answers there (stop it, or give this one another port)", ready)
	}
	return nil
}

// ReadyCheck returns a probe for a ready spec that CheckReady accepted.
func ReadyCheck(ready string, log *LogRing) func() bool {
	client := &http.Client{Timeout: time.Second}
	switch {
	case strings.HasPrefix(ready, "tcp:"):
		addr := strings.TrimPrefix(ready, "tcp:")
		if !strings.Contains(addr, ":") {
			addr = "127.0.0.1:" + addr
		}
		return func() bool {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
			}
			return err == nil
		}
	case strings.HasPrefix(ready, "log:"):
		re := regexp.MustCompile(strings.TrimPrefix(ready, "log:"))
		return func() bool {
			for _, l := range log.Tail(0) {
				if re.MatchString(l) {
					return true
				}
			}
			return false
		}
	}
	return func() bool {
		resp, err := client.Get(ready)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode < 500
	}
}

// Argv accepts a string (split at spaces), a binary from build(), or a list
// of strings and binaries.
func Argv(cmd starlark.Value) ([]string, error) {
	switch c := cmd.(type) {
	case starlark.String:
		if f := strings.Fields(string(c)); len(f) > 0 {
			redact.LearnArgs(f)
			return f, nil
		}
		return nil, errors.New("cmd: empty")
	case handle.Executable:
		return []string{c.Path()}, nil
	case starlark.Indexable:
		var out []string
		for i := 0; i < c.Len(); i++ {
			switch e := c.Index(i).(type) {
			case starlark.String:
				out = append(out, string(e))
			case handle.Executable:
				out = append(out, e.Path())
			default:
				return nil, fmt.Errorf("cmd: element %d must be a string or binary, got %s", i, e.Type())
			}
		}
		if len(out) == 0 {
			return nil, errors.New("cmd: empty")
		}
		redact.LearnArgs(out) // --requirepass PW: the display, the logs and errors hide PW
		return out, nil
	}
	return nil, fmt.Errorf("cmd must be a string, a binary or a list, got %s", cmd.Type())
}
