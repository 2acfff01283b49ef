package workload

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.starlark.net/starlark"
)

// rawServer answers every request on loopback with serve: a server that
// misbehaves in one exact way, which net/http's server cannot be made to.
// It reads each request's head first, so an answer never races its request.
func rawServer(t *testing.T, serve func(c *net.TCPConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					if !readHead(br) {
						return
					}
					serve(c.(*net.TCPConn))
				}
			})
		}
	})
	return "http://" + ln.Addr().String() + "/"
}

func readHead(br *bufio.Reader) bool {
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return false
		}
		if line == "\r\n" {
			return true
		}
	}
}

// answer writes resp and keeps the connection; answerClose closes it after.
func answer(resp string) func(*net.TCPConn) {
	return func(c *net.TCPConn) { c.Write([]byte(resp)) }
}

func answerClose(resp string) func(*net.TCPConn) {
	return func(c *net.TCPConn) {
		c.Write([]byte(resp))
		c.CloseWrite()
		time.Sleep(50 * time.Millisecond)
		c.Close()
	}
}

// TestHugeChunkSize is issue 14's panic: a chunk size of 2^63-1 made
// remaining = n+2 overflow and the closed loop slice out of range. Every
// loop now refuses the response as malformed.
func TestHugeChunkSize(t *testing.T) {
	for _, size := range []string{"7fffffffffffffff", "ffffffffffffffff", "7ffffffffffffffe"} {
		url := rawServer(t, answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"+size+"\r\nabc"))
		mustExec(t, `
for loop in [{"clients": 2}, {"rate": 50}]:
    r = workload.http(url, duration = "300ms", warmup = 0, timeout = "1s", **loop)  # answered at once: a timeout here is a stalled box
    assert.eq(r.count, 0)
    assert.eq(list(r.errors.keys()), ["malformed response"])
`, starlark.StringDict{"url": str(url)})
	}
}

// TestErrorTaxonomy: the same fault gets the same class in every HTTP loop
// (the closed loop's epoll loop, the open loop's client per connection,
// https's client per connection in a closed loop).
func TestErrorTaxonomy(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close()
	faults := []struct {
		name, url, class string
	}{
		{"refused", refused, "refused"},
		{"reset", rawServer(t, func(c *net.TCPConn) { c.SetLinger(0); c.Close() }), "reset"},
		{"closed", rawServer(t, func(c *net.TCPConn) { c.Close() }), "closed"},
		{"cut short", rawServer(t, answerClose("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")), "closed"},
		{"timeout", rawServer(t, func(c *net.TCPConn) {}), "timeout"},
		{"not http", rawServer(t, answer("SSH-2.0-OpenSSH_9.2\r\n\r\n")), "malformed response"},
		// A reply without a status line, then the close (issue 34: counted
		// as "closed").
		{"hello, close", rawServer(t, answerClose("hello")), "malformed response"},
		{"huge chunk", rawServer(t, answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\n")), "malformed response"},
		{"huge length", rawServer(t, answer("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n")), "malformed response"},
		{"negative length", rawServer(t, answer("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n")), "malformed response"},
		{"two lengths", rawServer(t, answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab")), "malformed response"},
		{"gzip coding", rawServer(t, answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n")), "malformed response"},
		{"bad chunk end", rawServer(t, answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n")), "malformed response"},
		{"status", rawServer(t, answer("HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n")), "status 503"},
	}
	loops := []string{`clients = 2`, `rate = 40`}
	for _, f := range faults {
		timeout := "1s" // a loaded test machine can stall a server goroutine for 150 ms
		if f.class == "timeout" {
			timeout = "150ms"
		}
		for _, loop := range loops {
			g := mustExec(t, `r = workload.http(url, duration = "300ms", warmup = 0, timeout = "`+timeout+`", `+loop+`)`,
				starlark.StringDict{"url": str(f.url)})
			r := g["r"].(*Run)
			if r.d.Count != 0 || len(r.d.Errors) != 1 || r.d.Errors[f.class] == 0 {
				t.Errorf("%s, %s: count %d errors %v, want only %q", f.name, loop, r.d.Count, r.d.Errors, f.class)
			}
		}
	}
	// TLS: an https client meets a plain-HTTP server, in both loops (the
	// timeout of the others: at 150 ms two handshakes of 38 timed out at
	// load 7).
	plain := plainGreeter(t)
	for _, loop := range loops {
		g := mustExec(t, `r = workload.http(url, duration = "300ms", warmup = 0, timeout = "1s", `+loop+`)`,
			starlark.StringDict{"url": str(strings.Replace(plain, "http:", "https:", 1))})
		if r := g["r"].(*Run); len(r.d.Errors) != 1 || r.d.Errors["tls"] == 0 {
			t.Errorf("tls, %s: errors %v, want only \"tls\"", loop, r.d.Errors)
		}
	}
}

// plainGreeter answers every connection at once with a plain-HTTP 400, as
// an HTTP server does to a TLS ClientHello.
func plainGreeter(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"))
			c.Close()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

// TestSQLErrorTaxonomy: the same SQL fault gets the same class in the
// closed loop (epoll, its own protocol reader) and the open loop (pgx).
func TestSQLErrorTaxonomy(t *testing.T) {
	t.Parallel()
	dsn := startPostgres(t)
	faults := []struct{ name, query, class string }{
		{"server error", "SELECT 1/0", "sqlstate 22012"},
		{"statement timeout", "SELECT pg_sleep(5)", "timeout"},
		{"backend terminated", "SELECT pg_terminate_backend(pg_backend_pid())", "sqlstate 57P01"},
	}
	for _, f := range faults {
		timeout := "2s" // a loaded test machine can keep a server busy for 300 ms
		if f.class == "timeout" {
			timeout = "300ms"
		}
		for _, loop := range []string{`clients = 2`, `rate = 20, max_inflight = 2`} {
			g := mustExec(t, `r = workload.sql(dsn, query = q, duration = "400ms", warmup = 0, timeout = "`+timeout+`", `+loop+`)`,
				starlark.StringDict{"dsn": str(dsn), "q": str(f.query)})
			r := g["r"].(*Run)
			if r.d.Count != 0 || len(r.d.Errors) != 1 || r.d.Errors[f.class] == 0 {
				t.Errorf("%s, %s: count %d errors %v dropped %d, want only %q", f.name, loop, r.d.Count, r.d.Errors, r.d.Dropped, f.class)
			}
		}
	}
}
