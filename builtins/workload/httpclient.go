package workload

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// httpTarget is a prepared HTTP/1.1 request. The client is deliberately
// lean: a raw keep-alive connection per worker, the request bytes built
// once (or into a reused buffer when a generator makes the path), and the
// response parsed in place from a bufio.Reader. net/http costs about twice
// wrk's CPU per request; this costs about what wrk does.
type httpTarget struct {
	addr    string // host:port to dial
	tls     *tls.Config
	method  string
	host    string // Host header
	base    string // path+query of url, prefix for generated paths
	headers []byte // "Name: value\r\n" lines
	body    []byte
	static  []byte // whole request, when gen is nil
	gen     func(seq int64) (string, error)
	noBody  bool          // HEAD: responses carry no body
	timeout time.Duration // connect timeout bound
	genErr  atomic.Value  // first generator error (string), for a warning
}

type httpClient struct {
	requestBuilder
	br *bufio.Reader

	mu      sync.Mutex // guards conn against abort
	conn    net.Conn
	aborted atomic.Bool

	closeAfter bool // the response said the connection ends
}

func (t *httpTarget) newClient() client {
	return &httpClient{requestBuilder: requestBuilder{t: t}}
}

// requestBuilder makes the bytes of request seq: the target's static
// request, or one built into its reused buffer from the generator's path.
type requestBuilder struct {
	t    *httpTarget
	wbuf []byte
}

func (c *httpClient) abort() {
	c.aborted.Store(true)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		c.conn.Close()
	}
}

func (c *httpClient) close() { c.drop() }

func (c *httpClient) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

func (c *httpClient) do(ctx context.Context, r request) string {
	if c.aborted.Load() {
		return "interrupted"
	}
	deadline := r.deadline
	req, class := c.request(r.seq)
	if class != "" {
		return class
	}
	if c.conn == nil {
		if class := c.dial(ctx, deadline); class != "" {
			return class
		}
	}
	class, keep := c.roundTrip(req, deadline)
	if !keep {
		c.drop()
	}
	return class
}

// request returns the bytes to send for request seq.
func (c *requestBuilder) request(seq int64) ([]byte, string) {
	t := c.t
	if t.gen == nil {
		return t.static, ""
	}
	p, err := t.gen(seq)
	if err != nil {
		t.genErr.CompareAndSwap(nil, err.Error())
		return nil, "generator error"
	}
	if len(p) >= 4 && p[:4] == "http" {
		uri, ok := sameHostURI(p, t)
		if !ok {
			return nil, "generator url on another host"
		}
		c.wbuf = t.appendRequest(c.wbuf[:0], uri)
		return c.wbuf, ""
	}
	base := t.base
	if len(p) > 0 && p[0] == '/' && base[len(base)-1] == '/' {
		base = base[:len(base)-1] // url "http://h/" + "/search" is "/search"
	}
	c.wbuf = t.appendRequest(c.wbuf[:0], base, p)
	return c.wbuf, ""
}

// appendRequest builds method, path (the concatenation of parts), headers
// and body into b.
func (t *httpTarget) appendRequest(b []byte, parts ...string) []byte {
	b = append(b, t.method...)
	b = append(b, ' ')
	for _, p := range parts {
		b = append(b, p...)
	}
	b = append(b, " HTTP/1.1\r\n"...)
	if t.host != "" {
		b = append(b, "Host: "...)
		b = append(b, t.host...)
		b = append(b, "\r\n"...)
	}
	b = append(b, t.headers...)
	if len(t.body) > 0 || t.method == "POST" || t.method == "PUT" || t.method == "PATCH" {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(t.body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, t.body...)
}

func (c *httpClient) dial(ctx context.Context, deadline time.Time) string {
	d := net.Dialer{Deadline: deadline}
	conn, err := d.DialContext(ctx, "tcp", c.t.addr)
	if err != nil {
		return classify(err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	conn = newRawConn(conn)
	if c.t.tls != nil {
		tc := tls.Client(conn, c.t.tls)
		_ = tc.SetDeadline(deadline)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return classify(err)
		}
		conn = tc
	}
	c.mu.Lock()
	c.conn = conn
	c.mu.Unlock()
	if c.aborted.Load() {
		return "interrupted"
	}
	if c.br == nil {
		c.br = bufio.NewReaderSize(conn, 16<<10)
	} else {
		c.br.Reset(conn)
	}
	return ""
}

// roundTrip writes req and reads one response; keep says whether the
// connection can carry the next request.
func (c *httpClient) roundTrip(req []byte, deadline time.Time) (class string, keep bool) {
	if err := c.conn.SetDeadline(deadline); err != nil {
		return classify(err), false
	}
	if _, err := c.conn.Write(req); err != nil {
		return classify(err), false
	}
	status, err := c.readResponse()
	if err != nil {
		return classify(err), false
	}
	keep = !c.closeAfter
	if status >= 400 {
		return statusClass(status), keep
	}
	return "", keep
}

var statusClasses sync.Map // int -> string, so error paths do not allocate

func statusClass(code int) string {
	if s, ok := statusClasses.Load(code); ok {
		return s.(string)
	}
	s := "status " + strconv.Itoa(code)
	statusClasses.Store(code, s)
	return s
}

var (
	errMalformed = errors.New("malformed response")
	hdrLength    = []byte("content-length:")
	hdrEncoding  = []byte("transfer-encoding:")
	hdrConn      = []byte("connection:")
	chunked      = []byte("chunked")
	closeTok     = []byte("close")
)

// readResponse parses the status line and headers and discards the body.
func (c *httpClient) readResponse() (int, error) {
	c.closeAfter = false
	line, err := c.readLine()
	if err != nil {
		return 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, errMalformed
	}
	status, err := atoi(line[9:12])
	if err != nil {
		return 0, errMalformed
	}
	if line[7] == '0' {
		c.closeAfter = true // HTTP/1.0 closes unless told otherwise
	}
	length, isChunked, err := c.readHeaders()
	if err != nil {
		return 0, err
	}
	if status >= 100 && status < 200 && status != 101 {
		return c.readResponse() // an interim response (100 Continue): the real one follows
	}
	return status, c.discardBody(status, length, isChunked)
}

func (c *httpClient) readHeaders() (length int64, isChunked bool, err error) {
	length = -1
	for {
		line, err := c.readLine()
		if err != nil {
			return 0, false, err
		}
		if len(line) == 0 {
			return length, isChunked, nil
		}
		switch {
		case hasPrefixFold(line, hdrLength):
			n, err := atoi(bytes.TrimSpace(line[len(hdrLength):]))
			if err != nil {
				return 0, false, errMalformed
			}
			length = int64(n)
		case hasPrefixFold(line, hdrEncoding):
			isChunked = containsFold(line[len(hdrEncoding):], chunked)
		case hasPrefixFold(line, hdrConn):
			if containsFold(line[len(hdrConn):], closeTok) {
				c.closeAfter = true
			}
		}
	}
}

func (c *httpClient) discardBody(status int, length int64, isChunked bool) error {
	switch {
	case c.t.noBody || status == 204 || status == 304 || status < 200:
		return nil
	case isChunked:
		return c.discardChunked()
	case length >= 0:
		_, err := c.br.Discard(int(length))
		return err
	}
	c.closeAfter = true // body ends at EOF
	_, err := io.Copy(io.Discard, c.br)
	return err
}

func (c *httpClient) discardChunked() error {
	for {
		line, err := c.readLine()
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil {
			return errMalformed
		}
		if n == 0 {
			for { // trailers up to the empty line
				l, err := c.readLine()
				if err != nil || len(l) == 0 {
					return err
				}
			}
		}
		if _, err := c.br.Discard(int(n) + 2); err != nil {
			return err
		}
	}
}

// readLine returns one line without its CRLF; the slice is valid until the
// next read. Overlong lines are skipped to their end (only their first
// bufferful is returned).
func (c *httpClient) readLine() ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	for err == bufio.ErrBufferFull {
		_, err = c.br.ReadSlice('\n')
		line = line[:0]
	}
	if err != nil {
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

func atoi(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, errMalformed
	}
	n := 0
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, errMalformed
		}
		n = n*10 + int(ch-'0')
	}
	return n, nil
}

func hasPrefixFold(s, prefix []byte) bool {
	return len(s) >= len(prefix) && bytes.EqualFold(s[:len(prefix)], prefix)
}

func containsFold(s, tok []byte) bool {
	for i := 0; i+len(tok) <= len(s); i++ {
		if bytes.EqualFold(s[i:i+len(tok)], tok) {
			return true
		}
	}
	return false
}

// classify names a transport error as the Run's errors dict shows it.
func classify(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT):
		return "refused" // ENOENT: a unix socket whose server is gone
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "closed"
	case errors.Is(err, net.ErrClosed), errors.Is(err, context.Canceled):
		return "interrupted"
	case errors.Is(err, errMalformed):
		return "malformed response"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "dns"
	}
	var tlsErr tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	var alert tls.AlertError
	if errors.As(err, &tlsErr) || errors.As(err, &certErr) || errors.As(err, &alert) {
		return "tls" // a handshake that failed: a certificate not trusted (insecure = True), a protocol mismatch
	}
	return "other"
}
