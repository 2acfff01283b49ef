package loadgen

import (
	"context"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

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
	loopBase
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
	inflight
}

func (t *SQLTarget) newLoop(clients int) loop {
	if !t.raw {
		return nil // TLS: the socket carries ciphertext; workers use pgx (SQLTarget.raw)
	}
	l := &sqlLoop{t: t, h: t.newHists()}
	for i := range clients {
		l.slots = append(l.slots, &slot{id: i, fd: -1, in: make([]byte, 8192)})
	}
	l.p, l.err = netpoll.NewPoller(clients) // before the engine registers l: abort uses it
	return l
}

// Abort wakes the loop, which sees the run's context cancelled and returns.
func (l *sqlLoop) Abort() { l.p.Wakeup() }

// Close ends the slots' connections, idle ones with a Terminate (as the
// pool would on closing), and the poller. It runs after run has returned.
func (l *sqlLoop) Close() {
	for _, s := range l.slots {
		if s.pc != nil && !s.busy && len(s.out) == 0 {
			msg, _ := (&pgproto3.Terminate{}).Encode(nil)
			netpoll.RawWrite(s.fd, msg)
		}
		l.drop(s)
	}
	l.p.Close()
}

func (l *sqlLoop) run(r *engine, rec *recorder) { l.runClosed(r, rec, l, len(l.slots)) }

// runOpen runs the open-loop jobs of s on the loop's connections (see
// driveOpen): each slot acquires a connection the first time it is needed
// and keeps it, so acquire holds those waits, not one per request.
func (l *sqlLoop) runOpen(r *engine, rec *recorder, s *schedule) {
	l.runOpenOn(r, rec, s, l, len(l.slots), l.t)
}

// launch runs job j's script on slot i, measured from j's intended start.
func (l *sqlLoop) launch(i int, j job, now time.Time) {
	r, s := l.r, l.slots[i]
	s.due, s.measured, s.t0 = j.due, r.inMeasurement(j.due), now
	if class := l.script(s, 0, j.seq); class != "" {
		r.settled(l.rec, &s.inflight, time.Now(), class)
		return
	}
	if s.pc == nil {
		if class := l.connect(r, s, now, s.measured); class != "" {
			r.settled(l.rec, &s.inflight, time.Now(), class)
			return
		}
		now = time.Now()
	}
	s.busy, s.failed = true, ""
	s.deadline = r.deadline(now)
	l.send(r, l.rec, s, now)
}

// script sets slot s up for request seq of stream: its script (a mix's
// draw), its arguments and its tag.
func (l *sqlLoop) script(s *slot, stream, seq int64) string {
	k := l.t.pick(stream, seq)
	s.stmt, s.end, s.generated = k.first, k.end, k.args != nil
	var err error
	if s.args, s.tag, err = k.argsOf(seq, l.t.tagged); err != nil {
		return ClassGenerator
	}
	return ""
}

func (l *sqlLoop) client(i int) *inflight { return &l.slots[i].inflight }

func (l *sqlLoop) start(i int, now time.Time) bool { return l.begin(l.r, l.rec, l.slots[i], now) }

func (l *sqlLoop) expire(i int, now time.Time) { l.fail(l.r, l.rec, l.slots[i], ClassTimeout, now) }

func (l *sqlLoop) ready(ev syscall.EpollEvent) {
	s := l.slots[ev.Fd]
	if s.pc != nil && ev.Events&syscall.EPOLLOUT != 0 && s.writing {
		l.flush(l.r, l.rec, s)
	}
	if s.pc != nil && ev.Events&(syscall.EPOLLIN|syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
		l.receive(l.r, l.rec, s)
	}
}

// begin starts slot s's next request, acquiring a connection first if it
// has none; it reports whether a request is now in flight.
//
// The script is chosen before a connection is acquired, so that a failed
// acquire counts in its tag; the next request is chosen again after the
// retry wait.
func (l *sqlLoop) begin(r *engine, rec *recorder, s *slot, now time.Time) bool {
	s.made, s.tag = now, ""
	if s.pc == nil && now.Before(s.retryAt) {
		return false
	}
	s.seq++
	class := l.script(s, l.streams+int64(s.id), s.seq-1)
	if s.generated { // the generator's time is not the target's (httpLoop.send)
		if now = time.Now(); !now.Before(r.end) {
			return false // made after the run's end: not started
		}
		s.made = now
	}
	measured := !now.Before(r.measureAt)
	if class != "" {
		r.finished(rec, now, time.Now(), measured, class, s.tag)
		return false
	}
	if s.pc == nil {
		if class := l.connect(r, s, now, measured); class != "" {
			end := time.Now()
			s.retryAt = end.Add(retryAfter)
			r.finished(rec, now, end, measured, class, s.tag)
			return false
		}
		now = time.Now()
		measured = !now.Before(r.measureAt)
	}
	s.busy, s.failed = true, ""
	s.t0, s.measured, s.deadline = now, measured, r.deadline(now)
	l.send(r, rec, s, now)
	return s.busy
}

// connect acquires slot s's connection from the pool, prepares the script
// on it and adds it to the epoll set. The acquire wait is recorded: in a
// closed loop each client acquires once, and again after its connection broke.
func (l *sqlLoop) connect(r *engine, s *slot, now time.Time, measured bool) string {
	ctx, cancel := context.WithDeadline(r.loadCtx, r.deadline(now))
	defer cancel()
	pc, err := l.t.pool.Acquire(ctx)
	if err != nil {
		return Classify(err)
	}
	if measured {
		recordUs(l.h.acquire, time.Since(now))
	}
	s.sds = s.sds[:0]
	for _, st := range l.t.stmts {
		sd, err := pc.Conn().Prepare(ctx, st.name, st.SQL)
		if err != nil {
			_ = pc.Hijack().PgConn().Conn().Close() // its state is unknown: not back to the pool
			return Classify(err)
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
		if err = l.p.Add(fd, s.id); err != nil {
			syscall.Close(fd)
		}
	}
	if err != nil {
		s.pc = nil
		return Classify(err)
	}
	l.watch(fd)
	s.fd, s.out, s.writing = fd, s.out[:0], false
	s.rd.reset()
	return ""
}

// send encodes the statement in flight as Bind, Execute, Sync and writes it.
func (l *sqlLoop) send(r *engine, rec *recorder, s *slot, now time.Time) {
	st, sd := l.t.stmts[s.stmt], s.sds[s.stmt]
	if len(s.args) < st.nparams {
		l.finish(r, rec, s, now, ClassFewArgs)
		return
	}
	if err := s.eqb.Build(s.pc.TypeMap(), sd, s.args[:st.nparams]); err != nil {
		l.finish(r, rec, s, now, Classify(err))
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
		l.finish(r, rec, s, now, Classify(err))
		return
	}
	s.ts = now
	l.flush(r, rec, s)
}

// flush writes what is pending without blocking, and asks for EPOLLOUT
// while the socket buffer is full.
func (l *sqlLoop) flush(r *engine, rec *recorder, s *slot) {
	w, err := netpoll.RawWrite(s.fd, s.out)
	if err != nil {
		s.out = s.out[:0]
		l.fail(r, rec, s, Classify(err), time.Now())
		return
	}
	s.out = s.out[:copy(s.out, s.out[w:])]
	if want := len(s.out) > 0; want != s.writing {
		s.writing = want
		l.p.Want(s.fd, s.id, want)
	}
}

// receive reads what slot s's connection has and handles every whole
// message in it that the loop acts on.
func (l *sqlLoop) receive(r *engine, rec *recorder, s *slot) {
	n, now, err := l.read(s.fd, s.in)
	if err != nil {
		l.fail(r, rec, s, Classify(err), now)
		return
	}
	for off := 0; s.pc != nil && off < n; {
		typ, body, used, ok, err := s.rd.next(s.in[off:n])
		off += used
		if err != nil {
			l.fail(r, rec, s, Classify(err), now)
			return
		}
		if ok {
			l.message(r, rec, s, typ, body, now)
		}
	}
}

// message handles one backend message of the statement in flight.
func (l *sqlLoop) message(r *engine, rec *recorder, s *slot, typ byte, body []byte, now time.Time) {
	if !s.busy {
		return // a notice or parameter status between requests
	}
	switch typ {
	case 'E':
		var msg pgproto3.ErrorResponse
		if err := msg.Decode(body); err != nil {
			s.failed = ClassMalformed
		} else if s.failed == "" {
			s.failed = Classify(pgconn.ErrorResponseToPgError(&msg))
		}
	case 'Z': // ReadyForQuery: the statement is over
		if s.failed != "" {
			l.finish(r, rec, s, now, s.failed)
			return
		}
		if s.measured {
			recordUs(l.h.byTag[s.stmt], now.Sub(s.ts))
		}
		if s.stmt++; s.stmt < s.end {
			l.send(r, rec, s, now)
			return
		}
		l.finish(r, rec, s, now, "")
		if !l.open && !r.thinking() && now.Before(r.end) && r.ctx.Err() == nil {
			l.begin(r, rec, s, now) // back to back, as closedWorker
		}
	}
	// BindComplete, DataRow, CommandComplete, notices: nothing to do.
}

// fail ends the request in flight with a transport error and drops the
// connection; the slot acquires a new one for its next request.
func (l *sqlLoop) fail(r *engine, rec *recorder, s *slot, class string, now time.Time) {
	l.drop(s)
	if s.failed != "" {
		class = s.failed // the server said why before it hung up (57P01: terminated)
	}
	if s.busy {
		l.finish(r, rec, s, now, class)
	}
}

// finish records the request in flight, ended at now.
func (l *sqlLoop) finish(r *engine, rec *recorder, s *slot, now time.Time, class string) {
	s.busy = false
	r.settled(rec, &s.inflight, now, class)
}

// drop closes slot s's connection: its protocol state is unknown (a
// request was in flight) or it is broken.
func (l *sqlLoop) drop(s *slot) {
	if s.pc == nil {
		return
	}
	l.p.Del(s.fd)
	syscall.Close(s.fd)
	s.pc, s.fd, s.out, s.writing = nil, -1, s.out[:0], false
	s.rd.reset()
}
