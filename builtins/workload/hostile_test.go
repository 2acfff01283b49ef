package workload

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
)

// flood writes head, then fill forever, until the client goes away (or a
// minute passes: every loop in a test is bounded).
func flood(head, fill string) func(*net.TCPConn) {
	return func(c *net.TCPConn) {
		c.Write([]byte(head))
		chunk := []byte(strings.Repeat(fill, 4096/len(fill)))
		for end := time.Now().Add(time.Minute); time.Now().Before(end); {
			c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Write(chunk); err != nil {
				c.Close()
				return
			}
		}
	}
}

// TestHostileHTTPTargets (issue 25): a target that sends an endless header
// or an endless body costs each request at most its timeout and bounded
// memory, in every loop; the failures get a class and the counts add up.
func TestHostileHTTPTargets(t *testing.T) {
	t.Parallel()
	// An endless header is malformed once 64 KiB of it have come, which
	// must happen within the request's timeout: at 200 ms, on a loaded box,
	// an open-loop request (timed from its intended start) sometimes ran
	// out first and was a timeout, which it then was. The endless bodies
	// have no size bound to break and end at their timeout.
	targets := []struct {
		name, head, fill string
		timeout          string
		class            []string // acceptable classes
	}{
		{"endless header", "HTTP/1.1 200 OK\r\nX-A: ", "a", "2s", []string{"malformed response"}},
		{"endless header lines", "HTTP/1.1 200 OK\r\n", "X-A: b\r\n", "2s", []string{"malformed response"}},
		{"endless body, no length", "HTTP/1.1 200 OK\r\n\r\n", "z", "200ms", []string{"timeout"}},
		{"endless body, huge length", "HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n", "z", "200ms", []string{"timeout"}},
		{"endless chunks", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "4\r\nzzzz\r\n", "200ms", []string{"timeout"}},
	}
	for _, tg := range targets {
		url := rawServer(t, flood(tg.head, tg.fill))
		for _, loop := range []string{`clients = 2`, `rate = 20`} {
			start := time.Now()
			// 1 s: in a 500 ms window at load, the closed loop's two
			// clients once had no request end in it at all (endless
			// chunks: count 0, errors none, a fresh-clone .ci/run of 93d6f88).
			g := mustExec(t, `r = workload.http(url, duration = "1s", warmup = 0, timeout = "`+tg.timeout+`", `+loop+`)`,
				starlark.StringDict{"url": str(url)})
			r := g["r"].(*Run)
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("%s, %s: the run took %v", tg.name, loop, took)
			}
			if r.d.Count != 0 || sumErrors(r.d.Errors) == 0 {
				t.Errorf("%s, %s: count %d errors %v", tg.name, loop, r.d.Count, r.d.Errors)
			}
			for class := range r.d.Errors {
				if !slices.Contains(tg.class, class) {
					t.Errorf("%s, %s: class %q, want one of %q", tg.name, loop, class, tg.class)
				}
			}
			if got := accounted(r); got != r.d.Intended {
				t.Errorf("%s, %s: %d requests accounted for, %d intended", tg.name, loop, got, r.d.Intended)
			}
			t.Logf("%s, %s: intended %d errors %v in %v", tg.name, loop, r.d.Intended, r.d.Errors, time.Since(start).Round(time.Millisecond))
		}
	}
}
