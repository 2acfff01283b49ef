package loadgen

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkRecord is the cost of recording one latency in a worker.
func BenchmarkRecord(b *testing.B) {
	rec := newRecorder(&windows{})
	b.ReportAllocs()
	for i := range b.N {
		rec.record(time.Duration(i%5000)*time.Microsecond, time.Millisecond, "", i>>20, "")
	}
}

// BenchmarkProgressLine is the cost of one progress update.
func BenchmarkProgressLine(b *testing.B) {
	r := &engine{spec: Spec{Duration: 10 * time.Second, Label: "GET http://x/"}, shared: &windows{}, start: time.Now()}
	r.measureAt = r.start
	for range 16 {
		r.recs = append(r.recs, newRecorder(r.shared))
	}
	r.recs[0].record(time.Millisecond, time.Millisecond, "", 0, "")
	r.recs[0].flush()
	b.ReportAllocs()
	for range b.N {
		_, errs := r.counts()
		_ = progressLine(r, time.Now(), 1234, errs)
	}
}

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
	benchRaw(b, func(url string) HTTPSpec { return HTTPSpec{URL: url + "/"} })
}

// benchRaw runs the client the spec makes against a server that answers
// every request alike and allocates nothing.
func benchRaw(b *testing.B, spec func(url string) HTTPSpec) {
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

func benchClient(b *testing.B, url string) { benchSpec(b, HTTPSpec{URL: url + "/"}) }

func benchSpec(b *testing.B, spec HTTPSpec) {
	t, err := NewHTTPTarget(spec)
	if err != nil {
		b.Fatal(err)
	}
	c := t.NewClient()
	defer c.Close()
	ctx := context.Background()
	b.ReportAllocs()
	rec := newRecorder(&windows{})
	if tags := t.Tags(); tags != nil {
		rec.tags = newTagTable(tags)
	}
	for i := range b.N {
		t0 := time.Now()
		class, tag := c.Do(ctx, Request{Seq: int64(i), Stream: 1, Deadline: time.Now().Add(5 * time.Second)})
		if class != "" {
			b.Fatal(class)
		}
		rec.record(time.Since(t0), 0, class, 0, tag)
	}
}

// BenchmarkRespParser is the cost of reading one response as net/http's
// "hello" handler writes it (the bench target of bench/workload), whole.
func BenchmarkRespParser(b *testing.B) {
	resp := []byte("HTTP/1.1 200 OK\r\nDate: Wed, 02 Dec 2026 03:45:00 GMT\r\nContent-Length: 6\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n\r\nhello\n")
	var p respParser
	b.ReportAllocs()
	b.SetBytes(int64(len(resp)))
	for b.Loop() {
		p.reset(false)
		if n, done, err := p.feed(resp); !done || err != nil || n != len(resp) {
			b.Fatal(n, done, err)
		}
	}
}

// BenchmarkRecordTagged is the cost of recording one latency in a worker of
// a tagged run: the run's recorder and its tag's (issue 50: tagging must
// cost the loop next to nothing).
func BenchmarkRecordTagged(b *testing.B) {
	rec := newRecorder(&windows{})
	rec.tags = newTagTable([]string{"read", "write", "search", "like"})
	tags := []string{"read", "write", "search", "like"}
	b.ReportAllocs()
	for i := range b.N {
		rec.record(time.Duration(i%5000)*time.Microsecond, time.Millisecond, "", i>>20, tags[i&3])
	}
}

// BenchmarkHTTPRoundTripRawMix is BenchmarkHTTPRoundTripRaw sending a mix
// of four tagged requests, drawn per request.
func BenchmarkHTTPRoundTripRawMix(b *testing.B) {
	benchRaw(b, func(url string) HTTPSpec {
		var rq []HTTPRequest
		for _, tag := range []string{"read", "write", "search", "like"} {
			rq = append(rq, HTTPRequest{URL: "/" + tag, Tag: tag})
		}
		return HTTPSpec{URL: url + "/", Requests: rq}
	})
}
