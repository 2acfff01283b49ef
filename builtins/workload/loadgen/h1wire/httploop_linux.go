package h1wire

import (
	"io"
	"net"
	"syscall"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
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
	loadgen.LoopBase
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
	loadgen.Inflight
}

var (
	_ loadgen.Multiplexed = (*HTTPTarget)(nil)
	_ loadgen.OpenOps     = (*httpLoop)(nil)
	_ loadgen.OpenRunner  = (*httpLoop)(nil)
)

// NewLoop is a loop of clients connections for plain HTTP; nil over TLS.
func (t *HTTPTarget) NewLoop(clients int) loadgen.Loop {
	if t.tls != nil {
		return nil // crypto/tls needs a blocking net.Conn: httpClient
	}
	l := &httpLoop{t: t}
	for i := range clients {
		l.conns = append(l.conns, &httpConn{id: i, req: requestBuilder{t: t}, fd: -1}) // in: at the first dial
	}
	l.Poller, l.PollErr = netpoll.NewPoller(clients)
	return l
}

func (l *httpLoop) Abort() { l.Poller.Wakeup() }

func (l *httpLoop) Close() {
	for _, c := range l.conns {
		l.drop(c)
	}
	l.Poller.Close()
}

func (l *httpLoop) RunClosed(run loadgen.LoopRun) { l.DriveClosed(run, l, len(l.conns)) }

// RunOpen runs the open-loop jobs of run on the loop's connections (see
// driveOpen).
func (l *httpLoop) RunOpen(run loadgen.LoopRun) {
	l.DriveOpen(run, l, len(l.conns), l.t)
}

// Launch sends job j on connection i, measured from j's intended start.
// The request is made first, so that a failed dial counts in its tag.
func (l *httpLoop) Launch(i int, j loadgen.Job, now time.Time) {
	c := l.conns[i]
	c.Due, c.Measured, c.T0 = j.Due, l.InMeasurement(j.Due), now
	req, class := c.req.request(0, j.Seq)
	c.Tag = c.req.tag
	if class != "" {
		l.Settled(&c.Inflight, time.Now(), class)
		return
	}
	if c.fd < 0 {
		if class := l.dial(c, now); class != "" {
			l.Settled(&c.Inflight, time.Now(), class)
			return
		}
	}
	c.Busy, c.Deadline = true, l.Deadline(now)
	c.resp.reset(c.req.noBody)
	slowdown()
	l.flush(c, req)
}

func (l *httpLoop) Client(i int) *loadgen.Inflight { return &l.conns[i].Inflight }

func (l *httpLoop) Start(i int, now time.Time) bool { return l.send(l.conns[i], now) }

func (l *httpLoop) Expire(i int, now time.Time) {
	l.fail(l.conns[i], loadgen.ClassTimeout, now)
}

func (l *httpLoop) Ready(ev syscall.EpollEvent) {
	c := l.conns[ev.Fd]
	if c.fd >= 0 && ev.Events&syscall.EPOLLOUT != 0 && c.writing {
		l.flush(c, c.out)
	}
	if c.fd >= 0 && ev.Events&(syscall.EPOLLIN|syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
		l.receive(c)
	}
}

// send sends c's next request, dialling first if c has no connection; it
// reports whether a request is in flight.
//
// The request is made before a dial, so that a refused one counts in its
// tag; the next request is made again after the retry wait. A request a
// generator made starts when it was made (c.Made): the generator's time
// is not the target's.
func (l *httpLoop) send(c *httpConn, now time.Time) bool {
	c.Made, c.Tag = now, ""
	if c.fd < 0 && now.Before(c.RetryAt) {
		return false
	}
	req, class := c.req.request(l.Stream(c.id), c.seq)
	c.seq++
	if l.t.generates {
		if now = time.Now(); !now.Before(l.End()) {
			return false // made after the run's end: not started
		}
		c.Made = now
	}
	measured := !now.Before(l.MeasureAt())
	c.Tag = c.req.tag
	if class != "" {
		l.Finished(now, time.Now(), measured, class, c.req.tag)
		return false
	}
	if c.fd < 0 {
		if class := l.dial(c, now); class != "" {
			c.RetryAt = time.Now().Add(loadgen.RetryAfter)
			l.Finished(now, time.Now(), measured, class, c.req.tag)
			return false
		}
	}
	c.Busy, c.T0, c.Measured, c.Deadline = true, now, measured, l.Deadline(now)
	c.resp.reset(c.req.noBody)
	slowdown()
	l.flush(c, req)
	return c.Busy
}

// dial connects c (a blocking connect, bounded by the request's deadline:
// once per client, and again after the server closed the connection).
func (l *httpLoop) dial(c *httpConn, now time.Time) string {
	d := net.Dialer{Deadline: l.Deadline(now)}
	conn, err := d.DialContext(l.LoadContext(), "tcp", l.t.addr)
	if err != nil {
		return loadgen.Classify(err)
	}
	fd, err := netpoll.Detach(conn)
	if err == nil {
		if err = l.Poller.Add(fd, c.id); err != nil {
			syscall.Close(fd)
		}
	}
	if err != nil {
		return loadgen.Classify(err)
	}
	l.Watch(fd)
	c.fd, c.writing = fd, false
	if c.in == nil {
		c.in = make([]byte, 16<<10)
	}
	return ""
}

// flush writes b (a request, or what is left of one) without blocking and
// keeps what the socket buffer could not take, asking for EPOLLOUT.
func (l *httpLoop) flush(c *httpConn, b []byte) {
	w, err := netpoll.RawWrite(c.fd, b)
	if err != nil {
		l.fail(c, loadgen.Classify(err), time.Now())
		return
	}
	c.out = append(c.out[:0], b[w:]...)
	if want := len(c.out) > 0; want != c.writing {
		c.writing = want
		l.Poller.Want(c.fd, c.id, want)
	}
}

// receive reads what c's connection has and feeds it to the response.
func (l *httpLoop) receive(c *httpConn) {
	n, now, err := l.Read(c.fd, c.in)
	switch {
	case err == io.EOF && !c.Busy:
		l.drop(c) // the server closed an idle keep-alive connection
		return
	case err == io.EOF:
		done, perr := c.resp.eof()
		if !done {
			l.fail(c, loadgen.Classify(perr), now)
			return
		}
		l.drop(c)
		l.finish(c, now)
		return
	case err != nil:
		l.fail(c, loadgen.Classify(err), now)
		return
	case n == 0 || !c.Busy:
		return
	}
	used, done, err := c.resp.feed(c.in[:n])
	if err != nil {
		l.fail(c, loadgen.Classify(err), now)
		return
	}
	if !done {
		return
	}
	if c.resp.closeAfter || used < n {
		l.drop(c) // closing, or bytes no request asked for
	}
	l.finish(c, now)
	if !l.Open() && !l.Thinking() && now.Before(l.End()) && !l.Interrupted() {
		l.send(c, now) // back to back, as closedWorker
	}
}

// finish records the response c just completed.
func (l *httpLoop) finish(c *httpConn, now time.Time) {
	c.Busy = false
	class := ""
	if c.resp.status >= 400 {
		class = loadgen.StatusClass(c.resp.status)
	}
	l.Settled(&c.Inflight, now, class)
}

// fail ends the request in flight with a transport error and closes the
// connection; the next request dials again.
func (l *httpLoop) fail(c *httpConn, class string, now time.Time) {
	l.drop(c)
	if c.Busy {
		c.Busy = false
		l.Settled(&c.Inflight, now, class)
	}
}

func (l *httpLoop) drop(c *httpConn) {
	if c.fd < 0 {
		return
	}
	l.Poller.Del(c.fd)
	syscall.Close(c.fd)
	c.fd, c.out, c.writing = -1, c.out[:0], false
}
