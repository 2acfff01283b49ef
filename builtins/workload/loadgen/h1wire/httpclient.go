package h1wire

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/netpoll"
)

// HTTPTarget is a prepared HTTP/1.1 request, or a mix of them. The client
// is deliberately lean: a raw keep-alive connection per worker, the request
// bytes built once (or into a reused buffer when a generator makes the
// path), and the response parsed in place from a bufio.Reader. net/http
// costs about twice wrk's CPU per request; this costs about what wrk does.
type HTTPTarget struct {
	addr      string // host:port to dial
	tls       *tls.Config
	host      string                               // Host header
	kinds     []httpKind                           // the one request, or a mix's
	draw      *loadgen.Mix                         // a mix's draw; nil: kinds[0] every time
	gen       func(seq int64) (HTTPRequest, error) // a tagged generator (HTTPSpec.Tagged)
	defaults  HTTPSpec                             // what a generated request leaves out
	timeout   time.Duration                        // connect timeout bound
	genErr    atomic.Value                         // first generator error (string), for a warning
	generates bool                                 // a generator makes some requests (gen, or a kind's)
}

type httpClient struct {
	requestBuilder
	br   *bufio.Reader
	resp respParser

	mu      sync.Mutex // guards conn against abort
	conn    net.Conn
	aborted atomic.Bool

	closeAfter bool // the response said the connection ends

	made      bool   // Make made the next request: Do sends it
	madeReq   []byte // its bytes (the builder's buffer)
	madeClass string // or why it could not be made
}

// Make makes the next request (see Maker): a generator's, or a mix's draw.
func (c *httpClient) Make(r loadgen.Request) string {
	c.madeReq, c.madeClass = c.request(r.Stream, r.Seq)
	c.made = true
	return c.tag
}

var (
	_ loadgen.Target = (*HTTPTarget)(nil)
	_ loadgen.Tagged = (*HTTPTarget)(nil)
	_ loadgen.Client = (*httpClient)(nil)
	_ loadgen.Maker  = (*httpClient)(nil)
)

func (t *HTTPTarget) NewClient() loadgen.Client {
	return &httpClient{requestBuilder: requestBuilder{t: t}}
}

// requestBuilder makes the bytes of request seq: the target's static
// request (or a mix's draw of them), or one built into its reused buffer
// from a generator's path or request.
type requestBuilder struct {
	t      *HTTPTarget
	wbuf   []byte
	tag    string // the last request's
	noBody bool   // the last request was HEAD
}

func (c *httpClient) Abort() {
	c.aborted.Store(true)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		c.conn.Close()
	}
}

func (c *httpClient) Close() { c.drop() }

func (c *httpClient) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

func (c *httpClient) Do(ctx context.Context, r loadgen.Request) (string, string) {
	if c.aborted.Load() {
		if !c.made {
			c.request(r.Stream, r.Seq) // for its tag: Ctrl-C leaves it undecided
		}
		c.made = false
		return loadgen.ClassInterrupted, c.tag
	}
	deadline := r.Deadline
	req, class := c.madeReq, c.madeClass
	if !c.made {
		req, class = c.request(r.Stream, r.Seq)
	}
	c.made = false
	if class != "" {
		return class, c.tag
	}
	if c.conn == nil {
		if class := c.dial(ctx, deadline); class != "" {
			return class, c.tag
		}
	}
	class, keep := c.roundTrip(req, deadline)
	if !keep {
		c.drop()
	}
	return class, c.tag
}

// request returns the bytes to send for request seq of stream, and sets
// the builder's tag and noBody for it.
func (c *requestBuilder) request(stream, seq int64) ([]byte, string) {
	t := c.t
	if t.gen != nil {
		return c.generated(seq)
	}
	k := &t.kinds[0]
	if t.draw != nil {
		k = &t.kinds[t.draw.Pick(stream, seq)]
	}
	c.tag, c.noBody = k.tag, k.noBody
	if k.gen == nil {
		return k.static, ""
	}
	p, err := k.gen(seq)
	if err != nil {
		t.genErr.CompareAndSwap(nil, err.Error())
		return nil, loadgen.ClassGenerator
	}
	if len(p) >= 4 && p[:4] == "http" {
		uri, ok := sameHostURI(p, t)
		if !ok {
			return nil, loadgen.ClassOffHost
		}
		c.wbuf = k.appendRequest(c.wbuf[:0], uri)
		return c.wbuf, ""
	}
	base := k.base
	if len(p) > 0 && p[0] == '/' && base[len(base)-1] == '/' {
		base = base[:len(base)-1] // url "http://h/" + "/search" is "/search"
	}
	c.wbuf = k.appendRequest(c.wbuf[:0], base, p)
	return c.wbuf, ""
}

// generated builds request seq as the tagged generator makes it, with
// the spec's method, headers and body where it gives none.
func (c *requestBuilder) generated(seq int64) ([]byte, string) {
	t := c.t
	c.tag, c.noBody = loadgen.Untagged, false
	rq, err := t.gen(seq)
	if err != nil {
		t.genErr.CompareAndSwap(nil, err.Error())
		return nil, loadgen.ClassGenerator
	}
	c.tag = rq.Tag
	k := httpKind{method: strings.ToUpper(or(rq.Method, t.defaults.Method, "GET")), body: t.defaults.Body, headers: t.kinds[0].headers}
	if rq.Body != nil {
		k.body = rq.Body
	}
	if len(rq.Headers) > 0 {
		if k.headers, err = t.headerLines(t.defaults.Headers, rq.Headers); err != nil {
			t.genErr.CompareAndSwap(nil, err.Error())
			return nil, loadgen.ClassGenerator
		}
	}
	uri := t.kinds[0].base
	switch p := rq.URL; {
	case strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://"):
		var ok bool
		if uri, ok = sameHostURI(p, t); !ok {
			return nil, loadgen.ClassOffHost
		}
	case strings.ContainsAny(p+k.method, " \r\n"):
		t.genErr.CompareAndSwap(nil, fmt.Sprintf("malformed request: %s %q", k.method, p))
		return nil, loadgen.ClassGenerator
	case p != "":
		uri = joinPath(uri, p)
	}
	c.noBody = k.method == "HEAD"
	c.wbuf = k.appendRequest(c.wbuf[:0], uri)
	return c.wbuf, ""
}

// appendRequest builds method, path (the concatenation of parts), headers
// and body into b.
func (k *httpKind) appendRequest(b []byte, parts ...string) []byte {
	b = append(b, k.method...)
	b = append(b, ' ')
	for _, p := range parts {
		b = append(b, p...)
	}
	b = append(b, " HTTP/1.1\r\n"...)
	b = append(b, k.headers...)
	if len(k.body) > 0 || k.method == "POST" || k.method == "PUT" || k.method == "PATCH" {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(k.body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, k.body...)
}

func (c *httpClient) dial(ctx context.Context, deadline time.Time) string {
	d := net.Dialer{Deadline: deadline}
	conn, err := d.DialContext(ctx, "tcp", c.t.addr)
	if err != nil {
		return loadgen.Classify(err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	conn = netpoll.NewRawConn(conn)
	if c.t.tls != nil {
		tc := tls.Client(conn, c.t.tls)
		_ = tc.SetDeadline(deadline)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return loadgen.Classify(err)
		}
		conn = tc
	}
	c.mu.Lock()
	c.conn = conn
	c.mu.Unlock()
	if c.aborted.Load() {
		return loadgen.ClassInterrupted
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
		return loadgen.Classify(err), false
	}
	if _, err := c.conn.Write(req); err != nil {
		return loadgen.Classify(err), false
	}
	status, err := c.readResponse()
	if err != nil {
		return loadgen.Classify(err), false
	}
	keep = !c.closeAfter
	if status >= 400 {
		return loadgen.StatusClass(status), keep
	}
	return "", keep
}

// readResponse reads one response through the parser the epoll loop uses,
// so both clients frame (and refuse) responses alike, and drops its body.
func (c *httpClient) readResponse() (int, error) {
	c.resp.reset(c.noBody)
	for {
		if c.br.Buffered() == 0 {
			if _, err := c.br.Peek(1); err == io.EOF {
				if _, err := c.resp.eof(); err != nil {
					return 0, err
				}
				c.closeAfter = true
				return c.resp.status, nil
			} else if err != nil {
				return 0, err
			}
		}
		b, _ := c.br.Peek(c.br.Buffered())
		n, done, err := c.resp.feed(b)
		_, _ = c.br.Discard(n)
		if err != nil {
			return 0, err
		}
		if done {
			c.closeAfter = c.resp.closeAfter || c.br.Buffered() > 0 // bytes no request asked for
			return c.resp.status, nil
		}
	}
}
