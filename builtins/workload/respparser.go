package workload

import (
	"bytes"
	"io"
	"strconv"
)

// respParser reads one HTTP/1.1 response from bytes as they arrive, for a
// loop that cannot block in a bufio.Reader: feed it what a read returned,
// as often as needed, until it says done. The body is counted and dropped,
// never kept. The rules are readResponse's: Content-Length, chunked,
// Connection: close, HTTP/1.0, a body up to EOF, no body for HEAD, 204
// and 304; interim 1xx responses are skipped.
type respParser struct {
	noBody bool // the request was HEAD

	state      parseState
	status     int
	closeAfter bool   // the connection ends after this response
	remaining  int64  // body or chunk bytes still to drop (stBody, stChunkData)
	partial    []byte // a header block or line split across reads
}

type parseState int

const (
	stHeader    parseState = iota // status line and headers, up to the empty line
	stBody                        // remaining bytes of a Content-Length body
	stChunkSize                   // a chunk-size line
	stChunkData                   // remaining bytes of a chunk and its CRLF
	stTrailers                    // trailer lines up to the empty line
	stUntilEOF                    // a body that ends when the connection does
	stDone
)

// maxHeader bounds a response's header block and a chunk line.
const maxHeader = 64 << 10

var crlfcrlf = []byte("\r\n\r\n")

// reset readies p for the next response.
func (p *respParser) reset(noBody bool) {
	*p = respParser{noBody: noBody, partial: p.partial[:0]}
}

// feed consumes the start of b; it returns how much it consumed and whether
// the response is complete. Bytes after a complete response are left.
func (p *respParser) feed(b []byte) (int, bool, error) {
	used := 0
	for used < len(b) && p.state != stDone {
		n, err := p.step(b[used:])
		if err != nil {
			return used, false, err
		}
		used += n
	}
	return used, p.state == stDone, nil
}

// eof is the connection closing: the end of a body read up to EOF, an
// error otherwise.
func (p *respParser) eof() (bool, error) {
	if p.state == stUntilEOF {
		p.state = stDone
		return true, nil
	}
	return false, io.ErrUnexpectedEOF
}

func (p *respParser) step(b []byte) (int, error) {
	switch p.state {
	case stHeader:
		block, n, ok, err := p.upTo(b, crlfcrlf)
		if ok {
			err = p.headers(block)
		}
		return n, err
	case stBody, stChunkData:
		n := int(min(int64(len(b)), p.remaining))
		if p.remaining -= int64(n); p.remaining == 0 {
			if p.state == stBody {
				p.state = stDone
			} else {
				p.state = stChunkSize
			}
		}
		return n, nil
	case stChunkSize:
		line, n, ok, err := p.upTo(b, crlfcrlf[:2])
		if ok {
			err = p.chunkSize(line)
		}
		return n, err
	case stTrailers:
		line, n, ok, err := p.upTo(b, crlfcrlf[:2])
		if ok && len(line) == 2 {
			p.state = stDone
		}
		return n, err
	case stUntilEOF:
		return len(b), nil
	}
	return 0, nil
}

// upTo returns the bytes up to and including sep, joined with what earlier
// reads left, and how much of b that used; ok false means sep has not come
// yet (all of b was kept).
func (p *respParser) upTo(b, sep []byte) (block []byte, used int, ok bool, err error) {
	if len(p.partial) == 0 {
		if i := bytes.Index(b, sep); i >= 0 {
			return b[:i+len(sep)], i + len(sep), true, nil
		}
	}
	from := max(0, len(p.partial)-len(sep)+1)
	p.partial = append(p.partial, b...)
	if i := bytes.Index(p.partial[from:], sep); i >= 0 {
		end := from + i + len(sep)
		used = len(b) - (len(p.partial) - end)
		block = p.partial[:end]
		p.partial = p.partial[:0] // block stays valid until the next append
		return block, used, true, nil
	}
	if len(p.partial) > maxHeader {
		return nil, len(b), false, errMalformed
	}
	return nil, len(b), false, nil
}

// headers parses a whole header block and picks how the body ends.
func (p *respParser) headers(block []byte) error {
	line, rest, _ := bytes.Cut(block, crlfcrlf[:2])
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return errMalformed
	}
	status, err := atoi(line[9:12])
	if err != nil {
		return errMalformed
	}
	p.status, p.closeAfter = status, line[7] == '0' // HTTP/1.0 closes unless told otherwise
	length, isChunked := int64(-1), false
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, crlfcrlf[:2])
		switch {
		case hasPrefixFold(line, hdrLength):
			n, err := atoi(bytes.TrimSpace(line[len(hdrLength):]))
			if err != nil {
				return errMalformed
			}
			length = int64(n)
		case hasPrefixFold(line, hdrEncoding):
			isChunked = containsFold(line[len(hdrEncoding):], chunked)
		case hasPrefixFold(line, hdrConn):
			p.closeAfter = p.closeAfter || containsFold(line[len(hdrConn):], closeTok)
		}
	}
	switch {
	case status >= 100 && status < 200 && status != 101:
		p.state = stHeader // an interim response (100 Continue): the real one follows
	case p.noBody || status == 204 || status == 304 || status < 200, length == 0 && !isChunked:
		p.state = stDone
	case isChunked:
		p.state = stChunkSize
	case length > 0:
		p.state, p.remaining = stBody, length
	default:
		p.state, p.closeAfter = stUntilEOF, true
	}
	return nil
}

func (p *respParser) chunkSize(line []byte) error {
	line = bytes.TrimRight(line, "\r\n")
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
	if err != nil || n < 0 {
		return errMalformed
	}
	if n == 0 {
		p.state = stTrailers
		return nil
	}
	p.state, p.remaining = stChunkData, n+2
	return nil
}
