package h1wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// respParser reads one HTTP/1.x response from bytes as they arrive, for
// both HTTP clients: the epoll loop feeds it what a read returned, the
// goroutine-per-connection client what its bufio.Reader holds. It says when
// the response is complete, its status and whether the connection ends
// after it; the body is counted and dropped, never kept.
//
// Framing follows net/http's ReadResponse exactly (a fuzz test holds it to
// that oracle): where net/http reads a response, this ends it at the same
// byte with the same status; where net/http refuses one, this refuses it
// too, with errMalformed, except for the few shapes listed at
// errUnsupported. Interim 1xx responses (but 101) are skipped. A response
// cut short is io.ErrUnexpectedEOF (the run's "closed") where net/http's
// error is one too, and errMalformed where net/http refuses what arrived.
type respParser struct {
	noBody bool // the request was HEAD

	state      parseState
	status     int
	http11     bool   // HTTP/1.1 or later (or 0.0, as net/http reads it): Transfer-Encoding counts
	closeAfter bool   // the connection ends after this response
	lineSeen   bool   // the status line of a header block still arriving was checked
	remaining  int64  // body or chunk bytes still to drop (stBody, stChunkData)
	excess     int64  // chunk framing beyond its data, as net/http bounds it
	partial    []byte // a header block or line split across reads
}

type parseState int

const (
	stHeader    parseState = iota // status line and headers, up to the empty line
	stBody                        // remaining bytes of a Content-Length body
	stChunkSize                   // a chunk-size line
	stChunkData                   // remaining bytes of a chunk
	stChunkEnd                    // the CRLF after a chunk's data
	stTrailers                    // trailer lines up to the empty line
	stUntilEOF                    // a body that ends when the connection does
	stDone
)

const (
	// maxHeader bounds a response's header block and its trailers.
	maxHeader = 64 << 10
	// maxChunkLine is net/http's bound on a chunk-size line (its bufio size).
	maxChunkLine = 4096
	// maxChunkExcess is net/http's bound on chunk framing beyond the data.
	maxChunkExcess = 16 << 10
)

var (
	// errMalformed is a response that breaks HTTP/1.1's framing rules.
	errMalformed = loadgen.ErrMalformed
	// errUnsupported is a response net/http would read but this parser
	// refuses, deliberately: a folded (obs-fold) header line, a status code
	// below 100, a header block over maxHeader, a chunk larger than any
	// connection carries. Both are "malformed response" to the run.
	errUnsupported = fmt.Errorf("%w (unsupported)", loadgen.ErrMalformed)
)

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
// error otherwise: errMalformed for a header block net/http would refuse
// as it stands (a reply without a status line, a bad header line, the
// last one read to EOF as net/textproto does), io.ErrUnexpectedEOF for
// one cut short. A reply without a status line was counted as closed.
func (p *respParser) eof() (bool, error) {
	if p.state == stUntilEOF {
		p.state = stDone
		return true, nil
	}
	if p.state == stHeader && len(p.partial) > 0 {
		if err := cutHeaders(p.partial); err != nil {
			return false, err
		}
	}
	return false, io.ErrUnexpectedEOF
}

// cutHeaders checks a header block that EOF ended before its empty line,
// as net/textproto reads it: the line EOF cut keeps a final "\r".
func cutHeaders(block []byte) error {
	lines := bytes.Split(block, []byte("\n"))
	for i, line := range lines {
		if i < len(lines)-1 {
			line = bytes.TrimSuffix(line, []byte("\r"))
		} else if len(line) == 0 {
			break
		}
		if i == 0 {
			if _, _, _, err := statusLine(line); err != nil {
				return err
			}
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			return errUnsupported
		}
		key, value, ok := bytes.Cut(trimSpaceTab(line), []byte(":"))
		if !ok || len(key) == 0 || !validKey(key) || !validValue(value) {
			return errMalformed
		}
	}
	return nil
}

// statusSoFar refuses, as soon as it is whole, the status line of a header
// block still arriving, as net/http does: a server that answers "hello\n"
// and keeps the connection open is malformed now, not a timeout later.
// It looks only at a block split across reads (p.partial), once.
func (p *respParser) statusSoFar() error {
	if p.lineSeen {
		return nil
	}
	i := bytes.IndexByte(p.partial, '\n')
	if i < 0 {
		return nil
	}
	p.lineSeen = true
	line, _ := cutLine(p.partial[:i+1])
	_, _, _, err := statusLine(line)
	return err
}

func (p *respParser) step(b []byte) (int, error) {
	switch p.state {
	case stHeader:
		block, n, ok, err := p.upTo(b, headerEnd, maxHeader)
		if ok {
			err = p.headers(block)
		} else if err == nil {
			err = p.statusSoFar()
		}
		return n, err
	case stBody, stChunkData:
		n := int(min(int64(len(b)), p.remaining))
		if p.remaining -= int64(n); p.remaining == 0 && p.state == stBody {
			p.state = stDone
		} else if p.remaining == 0 {
			p.state = stChunkEnd
		}
		return n, nil
	case stChunkEnd:
		return p.chunkEnd(b)
	case stChunkSize:
		line, n, ok, err := p.upTo(b, lineEnd, maxChunkLine)
		if ok {
			err = p.chunkSize(line)
		}
		return n, err
	case stTrailers:
		return p.trailers(b)
	case stUntilEOF:
		return len(b), nil
	}
	return 0, nil
}

// upTo returns the bytes up to the end that end finds (an index past it,
// or -1), joined with what earlier reads left, and how much of b that used;
// ok false means the end has not come yet (all of b was kept). More than
// limit bytes without an end is malformed.
func (p *respParser) upTo(b []byte, end func(b []byte, from int) int, limit int) (block []byte, used int, ok bool, err error) {
	if len(p.partial) == 0 {
		if i := end(b, 0); i >= 0 && i <= limit {
			return b[:i], i, true, nil
		}
	}
	from := len(p.partial) // where the new bytes start: what came before had no end
	p.partial = append(p.partial, b...)
	if end := end(p.partial, from); end >= 0 && end <= limit {
		used = len(b) - (len(p.partial) - end)
		block = p.partial[:end]
		p.partial = p.partial[:0] // block stays valid until the next append
		return block, used, true, nil
	}
	if len(p.partial) > limit {
		if limit == maxHeader {
			return nil, len(b), false, errUnsupported
		}
		return nil, len(b), false, errMalformed
	}
	return nil, len(b), false, nil
}

// headerEnd finds the empty line that ends a header block; lines may end
// in "\n" as well as "\r\n", as net/textproto reads them. b[:from] has been
// searched before (an end is at most 3 bytes: "\n\r\n").
func headerEnd(b []byte, from int) int {
	for i := max(from-2, 0); ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		switch {
		case i < len(b) && b[i] == '\n':
			return i + 1
		case i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n':
			return i + 2
		}
	}
}

func lineEnd(b []byte, from int) int {
	if i := bytes.IndexByte(b[from:], '\n'); i >= 0 {
		return from + i + 1
	}
	return -1
}

// headers parses a whole header block and picks how the body ends, in
// net/http's order: the status line, the header lines, Transfer-Encoding,
// Content-Length, then the status and method that allow no body.
func (p *respParser) headers(block []byte) error {
	line, rest := cutLine(block)
	major, minor, status, err := statusLine(line)
	if err != nil {
		return err
	}
	// net/http reads the framing of an "HTTP/0.0" response as HTTP/1.1's
	// (transfer.go: "Default to HTTP/1.1"), after deciding that it closes.
	p.status, p.http11 = status, major > 1 || major == 1 && minor >= 1 || major == 0 && minor == 0
	var h framing
	if err := h.read(rest); err != nil {
		return err
	}
	p.closeAfter = major < 1 || h.close || major == 1 && minor == 0 && !h.keepAlive
	chunked, err := h.chunked(p.http11)
	if err != nil {
		return err
	}
	length, err := h.contentLength()
	if err != nil {
		return err
	}
	switch {
	case status >= 100 && status < 200 && status != 101:
		p.state = stHeader // an interim response (100 Continue): the real one follows
		p.closeAfter, p.lineSeen = false, false
	case status == 101:
		p.state, p.closeAfter = stDone, true // what follows is another protocol
	case p.noBody || status == 204 || status == 304:
		p.state = stDone
	case chunked:
		p.state = stChunkSize
	case length == 0:
		p.state = stDone
	case length > 0:
		p.state, p.remaining = stBody, length
	default:
		p.state, p.closeAfter = stUntilEOF, true
	}
	return nil
}

// statusLine parses "HTTP/1.1 200 OK" as net/http does: a version
// HTTP/d.d, then (after spaces) a three-digit code.
func statusLine(line []byte) (major, minor, status int, err error) {
	proto, rest, ok := bytes.Cut(line, []byte(" "))
	if !ok || len(proto) != 8 || !bytes.HasPrefix(proto, []byte("HTTP/")) || proto[6] != '.' ||
		!isDigit(proto[5]) || !isDigit(proto[7]) {
		return 0, 0, 0, errMalformed
	}
	code, _, _ := bytes.Cut(bytes.TrimLeft(rest, " "), []byte(" "))
	if len(code) != 3 {
		return 0, 0, 0, errMalformed
	}
	if !isDigit(code[1]) || !isDigit(code[2]) {
		return 0, 0, 0, errMalformed
	}
	if code[0] == '+' || code[0] == '-' {
		return 0, 0, 0, errUnsupported // net/http's Atoi reads "+20" as status 20, "-00" as 0
	}
	if !isDigit(code[0]) {
		return 0, 0, 0, errMalformed
	}
	if status = int(code[0]-'0')*100 + int(code[1]-'0')*10 + int(code[2]-'0'); status < 100 {
		return 0, 0, 0, errUnsupported
	}
	return int(proto[5] - '0'), int(proto[7] - '0'), status, nil
}

// framing is what a header block says about where its body ends. It holds
// no slices of its own, so reading a response allocates nothing.
type framing struct {
	length        []byte // the first Content-Length value
	lengths       int    // how many Content-Length headers
	lengthsDiffer bool   // two of them disagree
	encoding      []byte // the first Transfer-Encoding value
	encodings     int
	badTrailer    bool // Trailer announces a framing header
	close         bool // Connection: close
	keepAlive     bool // Connection: keep-alive
}

// read checks every header line as net/textproto does (a token, a colon,
// a value without control bytes) and keeps the framing headers.
func (h *framing) read(block []byte) error {
	for len(block) > 0 {
		var line []byte
		line, block = cutLine(block)
		if len(line) == 0 {
			return nil // the empty line that ends the block
		}
		if line[0] == ' ' || line[0] == '\t' {
			return errUnsupported // obs-fold (RFC 9112 5.2), or a malformed first line
		}
		// line starts with neither space nor tab, so the name is all
		// before the first colon; blanks after the value are valid bytes
		// and trimmed with those before it.
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !validKey(line[:colon]) || !validValue(line[colon+1:]) {
			return errMalformed
		}
		key, value := line[:colon], trimSpaceTab(line[colon+1:])
		switch {
		case isName(key, hdrLength):
			if h.lengths++; h.lengths == 1 {
				h.length = value
			} else if !bytes.Equal(value, h.length) {
				h.lengthsDiffer = true
			}
		case isName(key, hdrEncoding):
			if h.encodings++; h.encodings == 1 {
				h.encoding = value
			}
		case isName(key, hdrTrailer):
			h.badTrailer = h.badTrailer || hasToken(value, hdrEncoding) || hasToken(value, hdrLength) || hasToken(value, hdrTrailer)
		case isName(key, hdrConn):
			h.close = h.close || hasToken(value, closeTok)
			h.keepAlive = h.keepAlive || hasToken(value, keepAliveTok)
		}
	}
	return nil
}

// isName says whether the header name key (ASCII: validKey passed) is
// name, which is lower case, in any case. The length decides most header
// lines (Date, Server, Content-Type) at once: bytes.EqualFold on each of
// the four names was a tenth of the closed loop's user CPU.
func isName(key, name []byte) bool {
	if len(key) != len(name) {
		return false
	}
	for i, c := range key {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// chunked: Transfer-Encoding counts from HTTP/1.1 on, as one header whose
// value is "chunked" (net/http refuses any other coding). A chunked body's
// Trailer header may not announce framing headers.
func (h *framing) chunked(http11 bool) (bool, error) {
	if h.encodings == 0 || !http11 {
		return false, nil
	}
	if h.encodings != 1 || !bytes.EqualFold(h.encoding, chunked) || h.badTrailer {
		return false, errMalformed
	}
	return true, nil
}

// contentLength is the Content-Length, -1 without one: every copy must
// agree and be a decimal that fits in 63 bits.
func (h *framing) contentLength() (int64, error) {
	if h.lengths == 0 {
		return -1, nil
	}
	if h.lengthsDiffer || len(h.length) == 0 {
		return 0, errMalformed
	}
	var n int64
	for _, c := range h.length {
		if !isDigit(c) || n > (math.MaxInt64-int64(c-'0'))/10 {
			return 0, errMalformed
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

// chunkSize reads a chunk-size line as net/http does: CRLF-terminated, no
// other CR, hex digits (at most 16) before an optional ";extension", and
// no more framing than maxChunkExcess beyond the data.
func (p *respParser) chunkSize(line []byte) error {
	if len(line) < 2 || line[len(line)-2] != '\r' || bytes.IndexByte(line, '\r') != len(line)-2 ||
		len(line)-2 >= maxChunkLine {
		return errMalformed
	}
	line = line[:len(line)-2]
	p.excess += int64(len(line)) + 2
	line, _, _ = bytes.Cut(bytes.TrimRight(line, " \t\r\n"), []byte(";"))
	if len(line) == 0 || len(line) > 16 {
		return errMalformed
	}
	var n uint64
	for _, c := range line {
		d, ok := hexDigit(c)
		if !ok {
			return errMalformed
		}
		n = n<<4 | uint64(d)
	}
	if n > math.MaxInt64/2 {
		// More than any connection will carry: net/http reads on and fails
		// at EOF; this says so now, without overflowing remaining.
		return errUnsupported
	}
	p.excess = max(p.excess-16-2*int64(n), 0)
	if p.excess > maxChunkExcess {
		return errMalformed
	}
	if n == 0 {
		p.state = stTrailers
		return nil
	}
	p.state, p.remaining = stChunkData, int64(n)
	return nil
}

// chunkEnd reads the two bytes after a chunk's data: "\r\n" and nothing
// else, as net/http checks them.
func (p *respParser) chunkEnd(b []byte) (int, error) {
	n := min(2-len(p.partial), len(b))
	p.partial = append(p.partial, b[:n]...)
	if len(p.partial) < 2 {
		return n, nil
	}
	ok := p.partial[0] == '\r' && p.partial[1] == '\n'
	p.partial = p.partial[:0]
	if !ok {
		return n, errMalformed
	}
	p.state = stChunkSize
	return n, nil
}

// trailers ends a chunked body: "\r\n" at once, or trailer lines (checked
// as header lines) up to an empty line. Trailer lines must end in CRLF:
// net/http reads a bare LF there only when a CRLFCRLF shows in its read
// buffer further on, a look-ahead a streaming parser cannot copy.
func (p *respParser) trailers(b []byte) (int, error) {
	block, n, ok, err := p.upTo(b, trailerEnd, maxHeader)
	if !ok {
		return n, err
	}
	if bytes.Count(block, []byte("\n")) != bytes.Count(block, []byte("\r\n")) {
		return n, errUnsupported
	}
	var h framing
	if err := h.read(block); err != nil {
		return n, err
	}
	p.state = stDone
	return n, nil
}

// trailerEnd: an empty line first is the end; otherwise a header block's.
func trailerEnd(b []byte, from int) int {
	switch {
	case len(b) >= 1 && b[0] == '\n':
		return 1
	case len(b) >= 2 && b[0] == '\r' && b[1] == '\n':
		return 2
	}
	return headerEnd(b, from)
}

// cutLine splits off the first line, without its "\n" or "\r\n".
func cutLine(b []byte) (line, rest []byte) {
	line = b
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		line, rest = b[:i], b[i+1:]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, rest
}

// trimSpaceTab trims spaces and tabs at both ends (bytes.Trim with a
// cutset builds its set on every call).
func trimSpaceTab(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// validKey: a header name is a token (RFC 9110 5.6.2); net/textproto also
// takes spaces before the colon (go.dev/issue/34540), in a name that then
// matches no header of framing.
func validKey(k []byte) bool {
	for _, c := range k {
		if !isKeyByte[c] {
			return false
		}
	}
	return true
}

// isKeyByte: a token byte, or a space (see validKey).
var isKeyByte = func() (t [256]bool) {
	for c := range 128 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == ' ' ||
			bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), byte(c)) >= 0
	}
	return t
}()

// validValue: no control bytes but tab. Eight bytes at a time: a word
// with no byte below 0x20 and none equal to 0x7f is valid whole (the
// usual case: values are text), and only a word that has one, which may
// be a tab, is looked at byte by byte.
func validValue(v []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(v) >= 8 {
		x := binary.LittleEndian.Uint64(v)
		below20 := (x - 0x20*ones) &^ x & highs // some byte < 0x20 (exact as a whole)
		y := x ^ 0x7f*ones
		is7f := (y - ones) &^ y & highs // some byte == 0x7f
		if below20|is7f != 0 && !validBytes(v[:8]) {
			return false
		}
		v = v[8:]
	}
	return validBytes(v)
}

func validBytes(v []byte) bool {
	for _, c := range v {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// hasToken says whether the comma-separated list v holds tok (any case).
func hasToken(v, tok []byte) bool {
	for len(v) > 0 {
		var t []byte
		t, v, _ = bytes.Cut(v, []byte(","))
		if bytes.EqualFold(trimSpaceTab(t), tok) {
			return true
		}
	}
	return false
}

var (
	hdrLength    = []byte("content-length")
	hdrEncoding  = []byte("transfer-encoding")
	hdrTrailer   = []byte("trailer")
	hdrConn      = []byte("connection")
	chunked      = []byte("chunked")
	closeTok     = []byte("close")
	keepAliveTok = []byte("keep-alive")
)
