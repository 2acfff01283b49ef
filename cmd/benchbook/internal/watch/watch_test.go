package watch

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/testsupport/httpget"
)

func TestCheckLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8000": true, "[::1]:8000": true, "localhost:0": true, "127.1.2.3:1": true,
		"0.0.0.0:8000": false, ":8000": false, "example.com:80": false, "127.0.0.1": false,
	} {
		if err := CheckLoopback(addr); (err == nil) != ok {
			t.Errorf("CheckLoopback(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
}

// TestRecordServer: a page waiting on /version learns of a publish at once;
// the served copy carries the script and a CSP that allows it by hash.
func TestRecordServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := startRecordServer(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	base := "http://" + s.addr
	record := `<html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"></head><body>r1</body></html>`
	s.publish([]byte(record))
	page := httpget.OK(t, base+"/")
	if !strings.Contains(page, "script-src 'sha256-") || !strings.Contains(page, "<script>") || !strings.HasSuffix(page, "</script></body></html>") {
		t.Errorf("served page: %s", page)
	}
	var wg sync.WaitGroup
	polled := make(chan string, 3)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			polled <- httpget.Body(base + "/version?since=1")
		}()
	}
	time.Sleep(100 * time.Millisecond) // the polls are waiting
	start := time.Now()
	s.publish([]byte(strings.Replace(record, "r1", "r2", 1)))
	wg.Wait()
	close(polled)
	for v := range polled {
		if v != "2" {
			t.Errorf("poll returned %q, want 2", v)
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("polls returned %v after the publish", took)
	}
	if !strings.Contains(httpget.OK(t, base+"/"), "r2") {
		t.Error("the page is not the published one")
	}
}

// TestRecordServerRefusesForeignHosts: a page at a DNS name that an
// attacker rebinds to 127.0.0.1 reaches the server with its own name in
// Host: the server answered it, so that page could read the whole record.
// Only the loopback names and the address it listens on are served;
// net/http's client sends the Host header as a browser would.
func TestRecordServerRefusesForeignHosts(t *testing.T) {
	for _, listen := range []string{"127.0.0.1:0", "[::1]:0"} {
		ctx, cancel := context.WithCancel(context.Background())
		s, err := startRecordServer(ctx, listen)
		if err != nil {
			cancel()
			t.Logf("%s: %v", listen, err) // a host without IPv6
			continue
		}
		s.publish([]byte(`<html><body>the record</body></html>`))
		_, port, _ := net.SplitHostPort(s.addr)
		host, _, _ := net.SplitHostPort(s.addr)
		for hdr, want := range map[string]int{
			net.JoinHostPort(host, port):         200,
			"localhost:" + port:                  200,
			"LocalHost:" + port:                  200,
			net.JoinHostPort(host, "1"):          403, // another port: another server
			"rebind.attacker.example:" + port:    403,
			"localhost.attacker.example:" + port: 403,
			"127.0.0.1.attacker.example:" + port: 403,
		} {
			for _, path := range []string{"/", "/version"} {
				req, _ := http.NewRequest("GET", "http://"+s.addr+path, nil)
				req.Host = hdr
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatalf("%s Host %q: %v", path, hdr, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != want || (want != 200 && strings.Contains(string(body), "the record")) {
					t.Errorf("%s %s Host %q: %d %q, want %d", listen, path, hdr, resp.StatusCode, body, want)
				}
			}
		}
		s.close()
		cancel()
	}
}
