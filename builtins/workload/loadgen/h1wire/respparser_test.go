package h1wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// TestRespParser feeds responses whole and split at every byte, and checks
// what readResponse's rules say: status, whether the connection ends, and
// that the parser stops exactly at the response's end.
func TestRespParser(t *testing.T) {
	for _, tc := range []struct {
		name, resp string
		head       bool
		status     int
		close, eof bool // closeAfter; complete only at EOF
		err        bool
	}{
		{name: "length", resp: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", status: 200},
		{name: "empty", resp: "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", status: 200},
		{name: "chunked", resp: "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n10\r\n0123456789abcdef\r\n0\r\nTrailer: t\r\n\r\n", status: 201},
		{name: "close", resp: "HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno", status: 503, close: true},
		{name: "http/1.0", resp: "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", status: 200, close: true},
		{name: "to eof", resp: "HTTP/1.1 200 OK\r\n\r\nall of it", status: 200, close: true, eof: true},
		{name: "head", resp: "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", head: true, status: 200},
		{name: "204", resp: "HTTP/1.1 204 No Content\r\n\r\n", status: 204},
		{name: "100 first", resp: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", status: 200},
		{name: "garbage", resp: "SSH-2.0-OpenSSH\r\n\r\n", err: true},
		{name: "bad chunk", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", err: true},
	} {
		for split := 0; split <= len(tc.resp); split++ {
			var p respParser
			p.reset(tc.head)
			parts := []string{tc.resp[:split], tc.resp[split:] + "NEXT"}
			done, used, err := false, 0, error(nil)
			for _, part := range parts {
				if done || err != nil {
					break
				}
				var n int
				n, done, err = p.feed([]byte(part))
				used += n
			}
			if tc.err {
				if err == nil {
					t.Errorf("%s split %d: no error", tc.name, split)
				}
				continue
			}
			if tc.eof {
				if done {
					t.Fatalf("%s split %d: done before EOF", tc.name, split)
				}
				done, err = p.eof()
				used = len(tc.resp)
			}
			if err != nil || !done || p.status != tc.status || p.closeAfter != tc.close || used != len(tc.resp) {
				t.Fatalf("%s split %d: done %v err %v status %d close %v used %d of %d", tc.name, split, done, err, p.status, p.closeAfter, used, len(tc.resp))
			}
		}
	}
	var p respParser
	p.reset(false)
	p.feed([]byte("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhal"))
	if done, err := p.eof(); done || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a body cut short: done %v err %v", done, err)
	}
	p.reset(false)
	if _, _, err := p.feed([]byte("HTTP/1.1 200 OK\r\nX: " + strings.Repeat("y", maxHeader+10))); err == nil {
		t.Error("an endless header block was accepted")
	}
}

// TestReplyWithoutStatusLine: a reply that is no HTTP response is a
// "malformed response", whether the server then closes (EOF) or keeps the
// connection open (the first line, once whole, is judged at once, as
// net/http does); a header block cut short by EOF stays "closed". Before,
// every reply ended by EOF before its empty line counted as closed.
func TestReplyWithoutStatusLine(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		eof        bool
		class      string
	}{
		{"text then close", "hello", true, loadgen.ClassMalformed},
		{"line then close", "hello world\r\n", true, loadgen.ClassMalformed},
		{"line, kept open", "SSH-2.0-OpenSSH_9.2\r\nmore", false, loadgen.ClassMalformed},
		{"bad header then close", "HTTP/1.1 200 OK\r\nno colon here", true, loadgen.ClassMalformed},
		{"status then close", "HTTP/1.1 200 OK\r\nX: y\r\n", true, loadgen.ClassClosed},
		{"half a status then close", "HTTP/1.1 20", true, loadgen.ClassMalformed},
		{"nothing then close", "", true, loadgen.ClassClosed},
	} {
		for split := 0; split <= len(tc.data); split++ {
			var p respParser
			p.reset(false)
			_, _, err := p.feed([]byte(tc.data[:split]))
			if err == nil {
				_, _, err = p.feed([]byte(tc.data[split:]))
			}
			if err == nil && tc.eof {
				_, err = p.eof()
			}
			if err == nil || loadgen.Classify(err) != tc.class {
				t.Errorf("%s (split %d): %v, class %q, want %q", tc.name, split, err, loadgen.Classify(err), tc.class)
				break
			}
		}
	}
}

// TestValidValueWords checks the eight-bytes-at-a-time check against the
// byte-by-byte rule: every byte value at every position of values up to
// 17 bytes long, among bytes that are valid, high, or tabs.
func TestValidValueWords(t *testing.T) {
	for _, fill := range []byte{'a', 0x80, 0xff, '\t', ' ', 0x7e, 0x20} {
		for n := 1; n <= 17; n++ {
			for pos := range n {
				for c := range 256 {
					v := bytes.Repeat([]byte{fill}, n)
					v[pos] = byte(c)
					if got, want := validValue(v), validBytes(v); got != want {
						t.Fatalf("validValue(%q) = %v, byte by byte %v", v, got, want)
					}
				}
			}
		}
	}
}
