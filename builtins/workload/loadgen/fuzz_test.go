package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
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

// pgMsg is one message the SQL loop acts on: its type and, for an error, the
// SQLSTATE (or "?" when the body does not decode).
type pgMsg struct {
	typ  byte
	code string
}

// ourPGMessages splits data with pgReader, fed in pieces of size cut (0:
// whole); it stops at the first error.
func ourPGMessages(data []byte, cut int) ([]pgMsg, error) {
	var r pgReader
	var out []pgMsg
	if cut <= 0 {
		cut = len(data)
	}
	for len(data) > 0 {
		piece := data[:min(cut, len(data))]
		data = data[len(piece):]
		for off := 0; off < len(piece); {
			typ, body, used, ok, err := r.next(piece[off:])
			off += used
			if err != nil {
				return out, err
			}
			if ok {
				out = append(out, decodePGMsg(typ, body))
			}
		}
	}
	return out, nil
}

func decodePGMsg(typ byte, body []byte) pgMsg {
	m := pgMsg{typ: typ}
	if typ == 'E' {
		var e pgproto3.ErrorResponse
		if err := e.Decode(body); err != nil {
			m.code = "?"
		} else {
			m.code = e.Code
		}
	}
	return m
}

// pgprotoMessages reads data with pgproto3's Frontend (as pgx does) and
// keeps the messages the SQL loop acts on, up to pgproto3's first error;
// complete says the data merely ran out (pgproto3 says "unexpected EOF" at
// the end of the bytes, cut mid-message or not): no framing error.
func pgprotoMessages(data []byte) (msgs []pgMsg, complete bool) {
	fe := pgproto3.NewFrontend(bytes.NewReader(data), io.Discard)
	fe.SetMaxBodyLen(maxKeptBody) // else a lying length makes it allocate 4 GB
	for {
		msg, err := fe.Receive()
		if err != nil {
			return msgs, errors.Is(err, io.ErrUnexpectedEOF)
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			msgs = append(msgs, pgMsg{typ: 'E', code: m.Code})
		case *pgproto3.ReadyForQuery:
			msgs = append(msgs, pgMsg{typ: 'Z'})
		}
	}
}

// FuzzPGReader holds the SQL loop's message framing to pgproto3's: every
// ErrorResponse and ReadyForQuery pgproto3 reads, pgReader reads in the same
// order with the same SQLSTATE, however the bytes are cut; past pgproto3's
// first error (a message type or body it refuses) pgReader may read on, as
// it skips what the loop does not act on; it never panics.
func FuzzPGReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		want, complete := pgprotoMessages(data)
		got, err := ourPGMessages(data, 0)
		if complete && err != nil {
			t.Fatalf("pgproto3 found no framing error, pgReader: %v\n%q", err, data)
		}
		if len(got) < len(want) || complete && len(got) != len(want) {
			t.Fatalf("pgproto3 %v, pgReader %v (err %v)\n%q", want, got, err, data)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("message %d: pgproto3 %v, pgReader %v\n%q", i, want[i], got[i], data)
			}
		}
		again, err2 := ourPGMessages(data, int(cut)+1)
		if len(again) != len(got) || (err2 == nil) != (err == nil) {
			t.Fatalf("whole: %v %v; in pieces of %d: %v %v\n%q", got, err, int(cut)+1, again, err2, data)
		}
		for i := range got {
			if again[i] != got[i] {
				t.Fatalf("in pieces of %d, message %d: %v, whole %v", int(cut)+1, i, again[i], got[i])
			}
		}
	})
}
