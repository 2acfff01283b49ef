package pgwire

import (
	"context"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/netpoll"
)

// sqlLoop runs a share of a closed loop's clients from one goroutine, the
// way pgbench does: each client holds one pooled connection for the whole
// run, the goroutine waits for all of them in one epoll_wait (a poller),
// and it speaks the extended protocol (Bind, Execute, Sync of a statement
// prepared by pgx) to each connection itself, with pgproto3's encoders.
//
// Why not a goroutine per client through pgconn: then every response costs
// a goroutine park, and Go's scheduler polls its netpoller twice before it
// sleeps (once without blocking, once blocking), plus a read that finds
// nothing. Here a response costs one epoll_wait shared with whatever else is
// ready and one read(2): less client CPU per transaction than pgbench.
type sqlLoop struct {
	t     *SQLTarget
	h     *sqlHists
	slots []*slot
	loadgen.LoopBase
}

// slot is one client of the loop: its connection and its request in flight.
type slot struct {
	id  int                            // index in slots, and the epoll data of its socket
	pc  *pgx.Conn                      // the slot's connection, taken from the pool (see connect); nil until then, and after it broke
	fd  int                            // its socket, the loop's own
	sds []*pgconn.StatementDescription // the script's statements, prepared on pc
	eqb pgx.ExtendedQueryBuilder

	out     []byte // encoded messages not yet written
	in      []byte // read buffer
	rd      pgReader
	writing bool // waiting for EPOLLOUT

	seq       int64
	args      []any
	generated bool      // a generator made args
	stmt      int       // index of the statement in flight
	end       int       // past the script's last statement
	ts        time.Time // the statement's start
	failed    string    // the request's error class, once the server said so
	loadgen.Inflight
}

var (
	_ loadgen.Multiplexed = (*SQLTarget)(nil)
	_ loadgen.OpenOps     = (*sqlLoop)(nil)
	_ loadgen.OpenRunner  = (*sqlLoop)(nil)
)

// NewLoop is a loop of clients connections read raw; nil over TLS.
func (t *SQLTarget) NewLoop(clients int) loadgen.Loop {
	if !t.raw {
		return nil // TLS: the socket carries ciphertext; workers use pgx (SQLTarget.raw)
	}
	l := &sqlLoop{t: t, h: t.newHists()}
	for i := range clients {
		l.slots = append(l.slots, &slot{id: i, fd: -1, in: make([]byte, 8192)})
	}
	l.Poller, l.PollErr = netpoll.NewPoller(clients) // before the engine registers l: abort uses it
	return l
}

// Abort wakes the loop, which sees the run's context cancelled and returns.
func (l *sqlLoop) Abort() { l.Poller.Wakeup() }

// Close ends the slots' connections, idle ones with a Terminate (as the
// pool would on closing), and the poller. It runs after run has returned.
func (l *sqlLoop) Close() {
	for _, s := range l.slots {
		if s.pc != nil && !s.Busy && len(s.out) == 0 {
			msg, _ := (&pgproto3.Terminate{}).Encode(nil)
			netpoll.RawWrite(s.fd, msg)
		}
		l.drop(s)
	}
	l.Poller.Close()
}

func (l *sqlLoop) RunClosed(run loadgen.LoopRun) { l.DriveClosed(run, l, len(l.slots)) }

// RunOpen runs the open-loop jobs of run on the loop's connections (see
// driveOpen): each slot acquires a connection the first time it is needed
// and keeps it, so acquire holds those waits, not one per request.
func (l *sqlLoop) RunOpen(run loadgen.LoopRun) {
	l.DriveOpen(run, l, len(l.slots), l.t)
}

// Launch runs job j's script on slot i, measured from j's intended start.
func (l *sqlLoop) Launch(i int, j loadgen.Job, now time.Time) {
	s := l.slots[i]
	s.Due, s.Measured, s.T0 = j.Due, l.InMeasurement(j.Due), now
	if class := l.script(s, 0, j.Seq); class != "" {
		l.Settled(&s.Inflight, time.Now(), class)
		return
	}
	if s.pc == nil {
		if class := l.connect(s, now, s.Measured); class != "" {
			l.Settled(&s.Inflight, time.Now(), class)
			return
		}
		now = time.Now()
	}
	s.Busy, s.failed = true, ""
	s.Deadline = l.Deadline(now)
	l.send(s, now)
}

// script sets slot s up for request seq of stream: its script (a mix's
// draw), its arguments and its tag.
func (l *sqlLoop) script(s *slot, stream, seq int64) string {
	k := l.t.pick(stream, seq)
	s.stmt, s.end, s.generated = k.first, k.end, k.args != nil
	var err error
	if s.args, s.Tag, err = k.argsOf(seq, l.t.tagged); err != nil {
		return loadgen.ClassGenerator
	}
	return ""
}

func (l *sqlLoop) Client(i int) *loadgen.Inflight { return &l.slots[i].Inflight }

func (l *sqlLoop) Start(i int, now time.Time) bool { return l.begin(l.slots[i], now) }

func (l *sqlLoop) Expire(i int, now time.Time) {
	l.fail(l.slots[i], loadgen.ClassTimeout, now)
}

func (l *sqlLoop) Ready(ev syscall.EpollEvent) {
	s := l.slots[ev.Fd]
	if s.pc != nil && ev.Events&syscall.EPOLLOUT != 0 && s.writing {
		l.flush(s)
	}
	if s.pc != nil && ev.Events&(syscall.EPOLLIN|syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
		l.receive(s)
	}
}

// begin starts slot s's next request, acquiring a connection first if it
// has none; it reports whether a request is now in flight.
//
// The script is chosen before a connection is acquired, so that a failed
// acquire counts in its tag; the next request is chosen again after the
// retry wait.
func (l *sqlLoop) begin(s *slot, now time.Time) bool {
	s.Made, s.Tag = now, ""
	if s.pc == nil && now.Before(s.RetryAt) {
		return false
	}
	s.seq++
	class := l.script(s, l.Stream(s.id), s.seq-1)
	if s.generated { // the generator's time is not the target's (httpLoop.send)
		if now = time.Now(); !now.Before(l.End()) {
			return false // made after the run's end: not started
		}
		s.Made = now
	}
	measured := !now.Before(l.MeasureAt())
	if class != "" {
		l.Finished(now, time.Now(), measured, class, s.Tag)
		return false
	}
	if s.pc == nil {
		if class := l.connect(s, now, measured); class != "" {
			end := time.Now()
			s.RetryAt = end.Add(loadgen.RetryAfter)
			l.Finished(now, end, measured, class, s.Tag)
			return false
		}
		now = time.Now()
		measured = !now.Before(l.MeasureAt())
	}
	s.Busy, s.failed = true, ""
	s.T0, s.Measured, s.Deadline = now, measured, l.Deadline(now)
	l.send(s, now)
	return s.Busy
}

// connect acquires slot s's connection from the pool, prepares the script
// on it and adds it to the epoll set. The acquire wait is recorded: in a
// closed loop each client acquires once, and again after its connection broke.
func (l *sqlLoop) connect(s *slot, now time.Time, measured bool) string {
	ctx, cancel := context.WithDeadline(l.LoadContext(), l.Deadline(now))
	defer cancel()
	pc, err := l.t.pool.Acquire(ctx)
	if err != nil {
		return loadgen.Classify(err)
	}
	if measured {
		recordUs(l.h.acquire, time.Since(now))
	}
	s.sds = s.sds[:0]
	for _, st := range l.t.stmts {
		sd, err := pc.Conn().Prepare(ctx, st.name, st.SQL)
		if err != nil {
			_ = pc.Hijack().PgConn().Conn().Close() // its state is unknown: not back to the pool
			return loadgen.Classify(err)
		}
		s.sds = append(s.sds, sd)
	}
	// The pool lives for this run only: the slot takes the connection out
	// of it, and its socket out of Go's netpoller (netpoll.Detach, as the HTTP
	// loop does), where each response also woke the runtime's netpoll
	// thread: unpinned on 2 cores that cost 9.5-15 µs of CPU per
	// transaction against 6.5-6.8 without it.
	s.pc = pc.Hijack()
	fd, err := netpoll.Detach(s.pc.PgConn().Conn())
	if err == nil {
		if err = l.Poller.Add(fd, s.id); err != nil {
			syscall.Close(fd)
		}
	}
	if err != nil {
		s.pc = nil
		return loadgen.Classify(err)
	}
	l.Watch(fd)
	s.fd, s.out, s.writing = fd, s.out[:0], false
	s.rd.reset()
	return ""
}

// send encodes the statement in flight as Bind, Execute, Sync and writes it.
func (l *sqlLoop) send(s *slot, now time.Time) {
	st, sd := l.t.stmts[s.stmt], s.sds[s.stmt]
	if len(s.args) < st.nparams {
		l.finish(s, now, loadgen.ClassFewArgs)
		return
	}
	if err := s.eqb.Build(s.pc.TypeMap(), sd, s.args[:st.nparams]); err != nil {
		l.finish(s, now, loadgen.Classify(err))
		return
	}
	var err error
	bind := pgproto3.Bind{PreparedStatement: sd.Name, ParameterFormatCodes: s.eqb.ParamFormats, Parameters: s.eqb.ParamValues, ResultFormatCodes: s.eqb.ResultFormats}
	if s.out, err = bind.Encode(s.out); err == nil {
		s.out, _ = (&pgproto3.Execute{}).Encode(s.out)
		s.out, _ = (&pgproto3.Sync{}).Encode(s.out)
	}
	if err != nil {
		s.out = s.out[:0]
		l.finish(s, now, loadgen.Classify(err))
		return
	}
	s.ts = now
	l.flush(s)
}

// flush writes what is pending without blocking, and asks for EPOLLOUT
// while the socket buffer is full.
func (l *sqlLoop) flush(s *slot) {
	w, err := netpoll.RawWrite(s.fd, s.out)
	if err != nil {
		s.out = s.out[:0]
		l.fail(s, loadgen.Classify(err), time.Now())
		return
	}
	s.out = s.out[:copy(s.out, s.out[w:])]
	if want := len(s.out) > 0; want != s.writing {
		s.writing = want
		l.Poller.Want(s.fd, s.id, want)
	}
}

// receive reads what slot s's connection has and handles every whole
// message in it that the loop acts on.
func (l *sqlLoop) receive(s *slot) {
	n, now, err := l.Read(s.fd, s.in)
	if err != nil {
		l.fail(s, loadgen.Classify(err), now)
		return
	}
	for off := 0; s.pc != nil && off < n; {
		typ, body, used, ok, err := s.rd.next(s.in[off:n])
		off += used
		if err != nil {
			l.fail(s, loadgen.Classify(err), now)
			return
		}
		if ok {
			l.message(s, typ, body, now)
		}
	}
}

// message handles one backend message of the statement in flight.
func (l *sqlLoop) message(s *slot, typ byte, body []byte, now time.Time) {
	if !s.Busy {
		return // a notice or parameter status between requests
	}
	switch typ {
	case 'E':
		var msg pgproto3.ErrorResponse
		if err := msg.Decode(body); err != nil {
			s.failed = loadgen.ClassMalformed
		} else if s.failed == "" {
			s.failed = loadgen.Classify(pgconn.ErrorResponseToPgError(&msg))
		}
	case 'Z': // ReadyForQuery: the statement is over
		if s.failed != "" {
			l.finish(s, now, s.failed)
			return
		}
		if s.Measured {
			recordUs(l.h.byTag[s.stmt], now.Sub(s.ts))
		}
		if s.stmt++; s.stmt < s.end {
			l.send(s, now)
			return
		}
		l.finish(s, now, "")
		if !l.Open() && !l.Thinking() && now.Before(l.End()) && !l.Interrupted() {
			l.begin(s, now) // back to back, as closedWorker
		}
	}
	// BindComplete, DataRow, CommandComplete, notices: nothing to do.
}

// fail ends the request in flight with a transport error and drops the
// connection; the slot acquires a new one for its next request.
func (l *sqlLoop) fail(s *slot, class string, now time.Time) {
	l.drop(s)
	if s.failed != "" {
		class = s.failed // the server said why before it hung up (57P01: terminated)
	}
	if s.Busy {
		l.finish(s, now, class)
	}
}

// finish records the request in flight, ended at now.
func (l *sqlLoop) finish(s *slot, now time.Time, class string) {
	s.Busy = false
	l.Settled(&s.Inflight, now, class)
}

// drop closes slot s's connection: its protocol state is unknown (a
// request was in flight) or it is broken.
func (l *sqlLoop) drop(s *slot) {
	if s.pc == nil {
		return
	}
	l.Poller.Del(s.fd)
	syscall.Close(s.fd)
	s.pc, s.fd, s.out, s.writing = nil, -1, s.out[:0], false
	s.rd.reset()
}
