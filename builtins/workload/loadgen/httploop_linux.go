package loadgen

import (
	"io"
	"net"
	"syscall"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen/netpoll"
)

// httpLoop runs a share of a closed loop's HTTP clients from one goroutine,
// as wrk does: each client keeps one connection, a poller waits for all of
// them, and respParser reads each response as its bytes arrive. Compared
// with a goroutine per client (httpClient), a response costs one read and a
// share of one epoll_wait instead of a goroutine park and two netpoll
// calls. Plain HTTP only: https keeps the goroutine per client.
type httpLoop struct {
	t     *HTTPTarget
	conns []*httpConn
	loopBase
}

// httpConn is one client of the loop.
type httpConn struct {
	id   int
	req  requestBuilder
	fd   int // the socket, the loop's own (see netpoll.Detach); -1 until dialled, and after it closed
	in   []byte
	out  []byte // request bytes not yet written
	resp respParser

	writing bool
	seq     int64
	inflight
}

func (t *HTTPTarget) newLoop(clients int) loop {
	if t.tls != nil {
		return nil // crypto/tls needs a blocking net.Conn: httpClient
	}
	l := &httpLoop{t: t}
	for i := range clients {
		l.conns = append(l.conns, &httpConn{id: i, req: requestBuilder{t: t}, fd: -1}) // in: at the first dial
	}
	l.p, l.err = netpoll.NewPoller(clients)
	return l
}

func (l *httpLoop) Abort() { l.p.Wakeup() }

func (l *httpLoop) Close() {
	for _, c := range l.conns {
		l.drop(c)
	}
	l.p.Close()
}

func (l *httpLoop) run(r *engine, rec *recorder) { l.runClosed(r, rec, l, len(l.conns)) }

// runOpen runs the open-loop jobs of s on the loop's connections (see
// driveOpen).
func (l *httpLoop) runOpen(r *engine, rec *recorder, s *schedule) {
	l.runOpenOn(r, rec, s, l, len(l.conns), l.t)
}

// launch sends job j on connection i, measured from j's intended start.
// The request is made first, so that a failed dial counts in its tag.
func (l *httpLoop) launch(i int, j job, now time.Time) {
	r, c := l.r, l.conns[i]
	c.due, c.measured, c.t0 = j.due, r.inMeasurement(j.due), now
	req, class := c.req.request(0, j.seq)
	c.tag = c.req.tag
	if class != "" {
		r.settled(l.rec, &c.inflight, time.Now(), class)
		return
	}
	if c.fd < 0 {
		if class := l.dial(r, c, now); class != "" {
			r.settled(l.rec, &c.inflight, time.Now(), class)
			return
		}
	}
	c.busy, c.deadline = true, r.deadline(now)
	c.resp.reset(c.req.noBody)
	slowdown()
	l.flush(r, l.rec, c, req)
}

func (l *httpLoop) client(i int) *inflight { return &l.conns[i].inflight }

func (l *httpLoop) start(i int, now time.Time) bool { return l.send(l.r, l.rec, l.conns[i], now) }

func (l *httpLoop) expire(i int, now time.Time) { l.fail(l.r, l.rec, l.conns[i], ClassTimeout, now) }

func (l *httpLoop) ready(ev syscall.EpollEvent) {
	c := l.conns[ev.Fd]
	if c.fd >= 0 && ev.Events&syscall.EPOLLOUT != 0 && c.writing {
		l.flush(l.r, l.rec, c, c.out)
	}
	if c.fd >= 0 && ev.Events&(syscall.EPOLLIN|syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
		l.receive(l.r, l.rec, c)
	}
}

// send sends c's next request, dialling first if c has no connection; it
// reports whether a request is in flight.
//
// The request is made before a dial, so that a refused one counts in its
// tag; the next request is made again after the retry wait. A request a
// generator made starts when it was made (c.made): the generator's time
// is not the target's.
func (l *httpLoop) send(r *engine, rec *recorder, c *httpConn, now time.Time) bool {
	c.made, c.tag = now, ""
	if c.fd < 0 && now.Before(c.retryAt) {
		return false
	}
	req, class := c.req.request(l.streams+int64(c.id), c.seq)
	c.seq++
	if l.t.generates {
		if now = time.Now(); !now.Before(r.end) {
			return false // made after the run's end: not started
		}
		c.made = now
	}
	measured := !now.Before(r.measureAt)
	c.tag = c.req.tag
	if class != "" {
		r.finished(rec, now, time.Now(), measured, class, c.req.tag)
		return false
	}
	if c.fd < 0 {
		if class := l.dial(r, c, now); class != "" {
			c.retryAt = time.Now().Add(retryAfter)
			r.finished(rec, now, time.Now(), measured, class, c.req.tag)
			return false
		}
	}
	c.busy, c.t0, c.measured, c.deadline = true, now, measured, r.deadline(now)
	c.resp.reset(c.req.noBody)
	slowdown()
	l.flush(r, rec, c, req)
	return c.busy
}

// dial connects c (a blocking connect, bounded by the request's deadline:
// once per client, and again after the server closed the connection).
func (l *httpLoop) dial(r *engine, c *httpConn, now time.Time) string {
	d := net.Dialer{Deadline: r.deadline(now)}
	conn, err := d.DialContext(r.loadCtx, "tcp", l.t.addr)
	if err != nil {
		return Classify(err)
	}
	fd, err := netpoll.Detach(conn)
	if err == nil {
		if err = l.p.Add(fd, c.id); err != nil {
			syscall.Close(fd)
		}
	}
	if err != nil {
		return Classify(err)
	}
	l.watch(fd)
	c.fd, c.writing = fd, false
	if c.in == nil {
		c.in = make([]byte, 16<<10)
	}
	return ""
}

// flush writes b (a request, or what is left of one) without blocking and
// keeps what the socket buffer could not take, asking for EPOLLOUT.
func (l *httpLoop) flush(r *engine, rec *recorder, c *httpConn, b []byte) {
	w, err := netpoll.RawWrite(c.fd, b)
	if err != nil {
		l.fail(r, rec, c, Classify(err), time.Now())
		return
	}
	c.out = append(c.out[:0], b[w:]...)
	if want := len(c.out) > 0; want != c.writing {
		c.writing = want
		l.p.Want(c.fd, c.id, want)
	}
}

// receive reads what c's connection has and feeds it to the response.
func (l *httpLoop) receive(r *engine, rec *recorder, c *httpConn) {
	n, now, err := l.read(c.fd, c.in)
	switch {
	case err == io.EOF && !c.busy:
		l.drop(c) // the server closed an idle keep-alive connection
		return
	case err == io.EOF:
		done, perr := c.resp.eof()
		if !done {
			l.fail(r, rec, c, Classify(perr), now)
			return
		}
		l.drop(c)
		l.finish(r, rec, c, now)
		return
	case err != nil:
		l.fail(r, rec, c, Classify(err), now)
		return
	case n == 0 || !c.busy:
		return
	}
	used, done, err := c.resp.feed(c.in[:n])
	if err != nil {
		l.fail(r, rec, c, Classify(err), now)
		return
	}
	if !done {
		return
	}
	if c.resp.closeAfter || used < n {
		l.drop(c) // closing, or bytes no request asked for
	}
	l.finish(r, rec, c, now)
	if !l.open && !r.thinking() && now.Before(r.end) && r.ctx.Err() == nil {
		l.send(r, rec, c, now) // back to back, as closedWorker
	}
}

// finish records the response c just completed.
func (l *httpLoop) finish(r *engine, rec *recorder, c *httpConn, now time.Time) {
	c.busy = false
	class := ""
	if c.resp.status >= 400 {
		class = StatusClass(c.resp.status)
	}
	r.settled(rec, &c.inflight, now, class)
}

// fail ends the request in flight with a transport error and closes the
// connection; the next request dials again.
func (l *httpLoop) fail(r *engine, rec *recorder, c *httpConn, class string, now time.Time) {
	l.drop(c)
	if c.busy {
		c.busy = false
		r.settled(rec, &c.inflight, now, class)
	}
}

func (l *httpLoop) drop(c *httpConn) {
	if c.fd < 0 {
		return
	}
	l.p.Del(c.fd)
	syscall.Close(c.fd)
	c.fd, c.out, c.writing = -1, c.out[:0], false
}
