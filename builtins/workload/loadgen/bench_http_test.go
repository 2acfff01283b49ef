package loadgen_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/h1wire"
)

// BenchmarkHTTPRoundTrip is the cost of one keep-alive request against a
// net/http server (server included in ns/op).
func BenchmarkHTTPRoundTrip(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello\n") }))
	defer srv.Close()
	benchClient(b, srv.URL)
}

// BenchmarkHTTPRoundTripRaw uses a server that allocates nothing, so
// allocs/op is the client's own.
func BenchmarkHTTPRoundTripRaw(b *testing.B) {
	benchRaw(b, func(url string) h1wire.HTTPSpec { return h1wire.HTTPSpec{URL: url + "/"} })
}

// benchRaw runs the client the spec makes against a server that answers
// every request alike and allocates nothing.
func benchRaw(b *testing.B, spec func(url string) h1wire.HTTPSpec) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		buf := make([]byte, 4096)
		resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n")
		for {
			if _, err := conn.Read(buf); err != nil { // one small request per read
				return
			}
			if _, err := conn.Write(resp); err != nil {
				return
			}
		}
	}()
	benchSpec(b, spec("http://"+ln.Addr().String()))
}

func benchClient(b *testing.B, url string) { benchSpec(b, h1wire.HTTPSpec{URL: url + "/"}) }

func benchSpec(b *testing.B, spec h1wire.HTTPSpec) {
	t, err := h1wire.NewHTTPTarget(spec)
	if err != nil {
		b.Fatal(err)
	}
	c := t.NewClient()
	defer c.Close()
	ctx := context.Background()
	b.ReportAllocs()
	rec := loadgen.NewTestRecorder(t.Tags())
	for i := range b.N {
		t0 := time.Now()
		class, tag := c.Do(ctx, loadgen.Request{Seq: int64(i), Stream: 1, Deadline: time.Now().Add(5 * time.Second)})
		if class != "" {
			b.Fatal(class)
		}
		rec.Record(time.Since(t0), class, tag)
	}
}

// BenchmarkHTTPRoundTripRawMix is BenchmarkHTTPRoundTripRaw sending a mix
// of four tagged requests, drawn per request.
func BenchmarkHTTPRoundTripRawMix(b *testing.B) {
	benchRaw(b, func(url string) h1wire.HTTPSpec {
		var rq []h1wire.HTTPRequest
		for _, tag := range []string{"read", "write", "search", "like"} {
			rq = append(rq, h1wire.HTTPRequest{URL: "/" + tag, Tag: tag})
		}
		return h1wire.HTTPSpec{URL: url + "/", Requests: rq}
	})
}
