package h1wire

import (
	"testing"
)

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
