package h1wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// frame is how a parser framed one response: its status, how many bytes it
// took, whether the connection ends after it; or its error.
type frame struct {
	status int
	used   int
	close  bool
	err    error
}

// netHTTPFrame reads data as net/http's client does (ReadResponse, then
// the whole body; interim 1xx responses skipped, as the Transport does).
func netHTTPFrame(data []byte, head bool) frame {
	r := bytes.NewReader(data)
	br := bufio.NewReader(r)
	req := &http.Request{Method: "GET"}
	if head {
		req.Method = "HEAD"
	}
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return frame{err: err}
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return frame{err: err}
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != 101 {
			continue
		}
		return frame{status: resp.StatusCode, used: len(data) - r.Len() - br.Buffered(), close: resp.Close}
	}
}

// ourFrame feeds data to respParser in pieces cut at the given sizes (the
// rest in one piece), then EOF if the response is not complete.
func ourFrame(data []byte, head bool, cuts ...int) frame {
	var p respParser
	p.reset(head)
	used := 0
	feed := func(b []byte) (bool, error) {
		n, done, err := p.feed(b)
		used += n
		return done, err
	}
	rest := data
	for _, c := range cuts {
		c = min(c, len(rest))
		if done, err := feed(rest[:c]); err != nil || done {
			return frame{status: p.status, used: used, close: p.closeAfter, err: err}
		}
		rest = rest[c:]
	}
	done, err := feed(rest)
	if err == nil && !done {
		if _, err = p.eof(); err == nil {
			used = len(data)
		}
	}
	return frame{status: p.status, used: used, close: p.closeAfter, err: err}
}

// cutShort says whether a parser's error is the connection ending before
// the response did (a run's "closed"), not a malformed response; net/http
// says so of trailers in words of its own ("http: unexpected EOF reading
// trailer").
func cutShort(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected EOF")
}

// longLastLine: the bytes after the last newline fill net/http's read
// buffer (4096), whose reader then meets EOF inside a line it never saw
// whole and calls it cut short; a short line ended by EOF it reads and
// judges (a reply without a status line is malformed, long or short).
func longLastLine(data []byte) bool {
	return len(data)-1-bytes.LastIndexByte(data, '\n') >= 4096
}

// netHTTPStricter lists where net/http refuses a response for a reason that
// is not framing, and respParser reads it: net/http's look-ahead for the end
// of trailers in its read buffer.
func netHTTPStricter(err error) bool {
	return strings.Contains(err.Error(), "suspiciously long trailer")
}

// FuzzRespParser holds the response parser both HTTP loops use to net/http's
// ReadResponse: the same status, the same end of the response and (where
// net/http closes) a closing connection; or both refuse. The parser may
// refuse a few shapes net/http reads (errUnsupported). However the bytes are
// cut into reads, the parser frames them alike.
func FuzzRespParser(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, head bool, cut uint16) {
		if len(data) > 1<<16 {
			return
		}
		want := netHTTPFrame(data, head)
		got := ourFrame(data, head)
		switch {
		case want.err != nil && got.err != nil && errors.Is(got.err, errUnsupported):
		case want.err != nil && got.err != nil && cutShort(want.err) && !cutShort(got.err) && longLastLine(data):
		case want.err != nil && got.err != nil && cutShort(want.err) != cutShort(got.err) && !netHTTPStricter(want.err):
			// A run counts one as "closed", the other as "malformed
			// response": a reply without a status line was "closed".
			t.Fatalf("net/http: %v; respParser: %v: one says cut short, the other malformed\n%q", want.err, got.err, data)
		case want.err != nil && got.err != nil:
		case want.err == nil && errors.Is(got.err, errUnsupported):
		case want.err != nil && got.err == nil && netHTTPStricter(want.err):
		case want.err != nil || got.err != nil:
			t.Fatalf("net/http: %v; respParser: %v (status %d, used %d)\n%q", want.err, got.err, got.status, got.used, data)
		case want.status != got.status || want.used != got.used || want.close && !got.close:
			t.Fatalf("net/http: status %d used %d close %v; respParser: status %d used %d close %v\n%q",
				want.status, want.used, want.close, got.status, got.used, got.close, data)
		}
		// Read boundaries change nothing: a cut anywhere, and byte by byte.
		cuts := []int{int(cut) % (len(data) + 1)}
		if len(data) <= 512 {
			cuts = cuts[:0]
			for range data {
				cuts = append(cuts, 1)
			}
		}
		again := ourFrame(data, head, cuts...)
		if (again.err == nil) != (got.err == nil) || again.err == nil && (again.status != got.status || again.used != got.used || again.close != got.close) {
			t.Fatalf("whole: %+v; in pieces %v: %+v\n%q", got, cuts, again, data)
		}
	})
}
