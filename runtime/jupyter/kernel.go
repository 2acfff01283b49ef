package jupyter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/google/uuid"
)

// shutdownGrace is how long shutdown waits for a cancelled execution to
// return before the handler's Shutdown runs anyway.
const shutdownGrace = 5 * time.Second

// Kernel serves one connection file's sockets for a Handler.
type Kernel struct {
	conn    *Connection
	h       Handler
	sig     signer
	session string // this kernel's session id, in every header it sends
	log     io.Writer

	shell, control, stdin, iopub, hb zmq4.Socket

	iopubMu  sync.Mutex
	count    int       // execution counter
	failedAt time.Time // when the last execution that stops on error failed, taken before its reply went out (the shell goroutine's alone)
	history  history

	mu      sync.Mutex
	cancel  context.CancelFunc // of the running execution; nil when idle
	stopped chan struct{}      // closed when shutdown was asked
	stopOne sync.Once

	// ShowCode is code as the kernel echoes it: on iopub (execute_input,
	// which every frontend connected sees) and in the history. nil echoes
	// it as sent; a kernel whose code may hold secrets masks them.
	ShowCode func(code string) string
}

// New prepares a kernel; Run binds its sockets and serves.
func New(conn *Connection, h Handler, log io.Writer) *Kernel {
	if log == nil {
		log = io.Discard
	}
	return &Kernel{conn: conn, h: h, sig: signer{key: []byte(conn.Key)}, session: uuid.NewString(), log: log, stopped: make(chan struct{})}
}

// Run binds the five sockets and serves requests until a shutdown_request
// or ctx is done; then it stops the handler and closes the sockets.
func (k *Kernel) Run(ctx context.Context) error {
	sctx, cancelSockets := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelSockets()
	if err := k.bind(sctx); err != nil {
		k.closeSockets()
		return err
	}
	defer k.closeSockets()
	go k.heartbeat()
	go k.drainStdin()
	shellQ := make(chan *Message, 64)
	go k.receive(k.shell, shellQ)
	controlQ := make(chan *Message, 16)
	go k.receive(k.control, controlQ)
	shellDone := make(chan struct{})
	go func() {
		defer close(shellDone)
		k.serveShell(shellQ)
	}()
	go k.serveControl(controlQ)
	k.publishStatus(nil, "starting")
	select {
	case <-ctx.Done():
		k.stop()
	case <-k.stopped:
	}
	k.Interrupt()
	select {
	case <-shellDone:
	case <-time.After(shutdownGrace):
		fmt.Fprintln(k.log, "kernel: the running execution did not stop in time; shutting down anyway")
	}
	k.h.Shutdown()
	return nil
}

// Interrupt cancels the running execution, as interrupt_request does (the
// kernel's SIGINT handler calls it). Idle, it does nothing.
func (k *Kernel) Interrupt() {
	k.mu.Lock()
	cancel := k.cancel
	k.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// Stop ends Run as a shutdown_request would (SIGTERM).
func (k *Kernel) Stop() { k.stop() }

// stop ends Run. A restart is the client's business: it starts a new
// kernel process once this one has exited.
func (k *Kernel) stop() {
	k.stopOne.Do(func() { close(k.stopped) })
}

func (k *Kernel) bind(ctx context.Context) error {
	k.shell = zmq4.NewRouter(ctx)
	k.control = zmq4.NewRouter(ctx)
	k.stdin = zmq4.NewRouter(ctx)
	k.iopub = zmq4.NewPub(ctx)
	k.hb = zmq4.NewRep(ctx)
	for _, s := range []struct {
		sock zmq4.Socket
		port int
		name string
	}{{k.shell, k.conn.ShellPort, "shell"}, {k.control, k.conn.ControlPort, "control"}, {k.stdin, k.conn.StdinPort, "stdin"},
		{k.iopub, k.conn.IOPubPort, "iopub"}, {k.hb, k.conn.HBPort, "heartbeat"}} {
		if err := s.sock.Listen(k.conn.endpoint(s.port)); err != nil {
			return fmt.Errorf("kernel: %s socket on %s: %w", s.name, k.conn.endpoint(s.port), err)
		}
	}
	return nil
}

func (k *Kernel) closeSockets() {
	for _, s := range []zmq4.Socket{k.shell, k.control, k.stdin, k.iopub, k.hb} {
		if s != nil {
			s.Close()
		}
	}
}

// heartbeat echoes every ping, which is how a client sees the kernel alive.
func (k *Kernel) heartbeat() {
	for {
		msg, err := k.hb.Recv()
		if err != nil {
			return
		}
		if err := k.hb.Send(msg); err != nil {
			return
		}
	}
}

// drainStdin reads the stdin socket: this kernel never asks for input, so
// nothing should arrive, and what does is dropped.
func (k *Kernel) drainStdin() {
	for {
		if _, err := k.stdin.Recv(); err != nil {
			return
		}
	}
}

// receive decodes a ROUTER's messages onto q, dropping (and logging) those
// whose signature does not match.
func (k *Kernel) receive(sock zmq4.Socket, q chan<- *Message) {
	defer close(q)
	for {
		raw, err := sock.Recv()
		if err != nil {
			return
		}
		m, err := k.sig.decode(raw.Frames)
		if err != nil {
			fmt.Fprintf(k.log, "kernel: dropped a message: %v\n", err)
			continue
		}
		select {
		case q <- m:
		case <-k.stopped:
			return
		}
	}
}

// serveShell answers shell requests in order, one at a time.
func (k *Kernel) serveShell(q <-chan *Message) {
	for {
		select {
		case <-k.stopped:
			return
		case m, ok := <-q:
			if !ok {
				return
			}
			if k.handle(k.shell, m) {
				k.abortFollowing(q)
			}
		}
	}
}

// serveControl answers control requests, which go on while an execution
// runs: an interrupt cancels it, a shutdown ends the kernel.
func (k *Kernel) serveControl(q <-chan *Message) {
	for m := range q {
		k.handle(k.control, m)
	}
}

// handle answers one request between busy and idle statuses. It reports
// whether the requests that follow must be aborted: an execution that
// asked to stop on error failed.
func (k *Kernel) handle(sock zmq4.Socket, m *Message) (abort bool) {
	k.publishStatus(m, "busy")
	defer k.publishStatus(m, "idle")
	var content any
	var meta map[string]any
	switch m.Header.MsgType {
	case "kernel_info_request":
		content = k.kernelInfo()
	case "execute_request":
		content, meta, abort = k.execute(m)
	case "complete_request":
		content = k.complete(m)
	case "inspect_request":
		content = k.inspect(m)
	case "is_complete_request":
		content = k.isComplete(m)
	case "history_request":
		content = k.historyReply(m)
	case "comm_info_request":
		content = map[string]any{"status": "ok", "comms": map[string]any{}}
	case "interrupt_request":
		k.Interrupt()
		content = map[string]any{"status": "ok"}
	case "shutdown_request":
		var req struct {
			Restart bool `json:"restart"`
		}
		_ = json.Unmarshal(m.Content, &req)
		content = map[string]any{"status": "ok", "restart": req.Restart}
		k.reply(sock, m, "shutdown_reply", content)
		k.stop()
		return false
	default:
		// comm_open and friends: no comms here, and a reply to a message
		// that wants none would confuse the client.
		fmt.Fprintf(k.log, "kernel: ignored %s\n", m.Header.MsgType)
		return false
	}
	if abort {
		// Before the reply goes out: a client that answers it at once
		// stamps its next request later than this, and that one runs.
		k.failedAt = time.Now()
	}
	k.replyMeta(sock, m, replyType(m.Header.MsgType), content, meta)
	return abort
}

func replyType(request string) string {
	base, _ := strings.CutSuffix(request, "_request")
	return base + "_reply"
}

// abortWindow is how long the kernel goes on aborting after a failed
// execution that asked to stop on error: until no request has arrived for
// this long. A frontend's "Run All" sends every cell at once, and the
// requests reach the kernel over some milliseconds, not all queued when
// the failure's reply goes out (ipykernel's stop_on_error_timeout).
const abortWindow = 200 * time.Millisecond

// abortFollowing answers the executions sent before a failed one was
// answered with "aborted", as a kernel does for stop_on_error: those
// queued and those that arrive until none has for abortWindow. An
// execution the client made after it saw the failure (its header's date
// is later: a frontend that runs the next cell once the last is answered)
// runs; so do the requests of other kinds among them.
func (k *Kernel) abortFollowing(q <-chan *Message) {
	failed := k.failedAt
	quiet := time.NewTimer(abortWindow)
	defer quiet.Stop()
	for {
		select {
		case <-quiet.C:
			return
		case <-k.stopped:
			return
		case m, ok := <-q:
			if !ok {
				return
			}
			if m.Header.MsgType != "execute_request" || sentAfter(m, failed) {
				if k.handle(k.shell, m) {
					failed = k.failedAt // another failure: abort what was sent before it
				}
			} else {
				k.publishStatus(m, "busy")
				k.reply(k.shell, m, "execute_reply", map[string]any{"status": "aborted", "execution_count": k.count})
				k.publishStatus(m, "idle")
			}
			quiet.Reset(abortWindow)
		}
	}
}

// sentAfter reports whether the request's header says it was made after
// t. A request without a readable date was not.
func sentAfter(m *Message, t time.Time) bool {
	d, err := time.Parse(time.RFC3339Nano, m.Header.Date)
	return err == nil && d.After(t)
}

func (k *Kernel) kernelInfo() map[string]any {
	info := k.h.Info()
	links := info.HelpLinks
	if links == nil {
		links = []HelpLink{}
	}
	return map[string]any{
		"status":                 "ok",
		"protocol_version":       ProtocolVersion,
		"implementation":         info.Implementation,
		"implementation_version": info.ImplementationVersion,
		"language_info":          info.Language,
		"banner":                 info.Banner,
		"help_links":             links,
		"debugger":               false,
	}
}

// execute runs one execute_request: its reply's content and metadata, and
// whether the requests that follow must be aborted (a failure with
// stop_on_error).
func (k *Kernel) execute(m *Message) (content, meta map[string]any, abort bool) {
	req := &ExecuteRequest{StopOnError: true, StoreHistory: true}
	if err := json.Unmarshal(m.Content, req); err != nil {
		return map[string]any{"status": "error", "ename": "BadRequest", "evalue": err.Error(), "traceback": []string{}, "execution_count": k.count}, nil, false
	}
	var reqMeta executeMetadata
	_ = json.Unmarshal(m.Metadata, &reqMeta)
	req.CellID, req.DeletedCells = reqMeta.CellID, reqMeta.DeletedCells
	if req.Silent {
		req.StoreHistory = false
	}
	if req.StoreHistory {
		k.count++
	}
	req.Count = k.count
	shown := req.Code
	if k.ShowCode != nil {
		shown = k.ShowCode(req.Code)
	}
	if !req.Silent {
		k.publish(m, "execute_input", map[string]any{"code": shown, "execution_count": req.Count})
	}
	out := &Publisher{k: k, parent: m, count: req.Count, silent: req.Silent}
	ctx, done := k.interruptible()
	failure := k.h.Execute(ctx, req, out)
	done()
	out.close()
	if req.StoreHistory {
		k.history.add(req.Count, shown, out.result)
	}
	exprs := map[string]any{}
	if failure != nil {
		if failure.Traceback == nil {
			failure.Traceback = []string{}
		}
		if !req.Silent {
			k.publish(m, "error", failure)
		}
		return map[string]any{"status": "error", "execution_count": req.Count, "ename": failure.Name,
			"evalue": failure.Value, "traceback": failure.Traceback, "user_expressions": exprs}, out.replyMetadata(), req.StopOnError
	}
	payload := req.Payload
	if payload == nil {
		payload = []any{}
	}
	k.userExpressions(req.UserExpressions, exprs)
	return map[string]any{"status": "ok", "execution_count": req.Count, "payload": payload, "user_expressions": exprs}, out.replyMetadata(), false
}

// userExpressions evaluates an execute_request's user_expressions after
// the code succeeded, as the protocol says (a failed execution answers
// {}): each one to a MIME bundle, or to an error dict. A frontend reads
// state this way with a silent execution, so they are evaluated for one
// too. An interrupt cancels them as it cancels the code.
func (k *Kernel) userExpressions(exprs map[string]string, into map[string]any) {
	if len(exprs) == 0 {
		return
	}
	ctx, done := k.interruptible()
	defer done()
	names := make([]string, 0, len(exprs))
	for name := range exprs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data, failure := k.h.Evaluate(ctx, exprs[name])
		if failure != nil {
			tb := failure.Traceback
			if tb == nil {
				tb = []string{}
			}
			into[name] = map[string]any{"status": "error", "ename": failure.Name, "evalue": failure.Value, "traceback": tb}
			continue
		}
		into[name] = map[string]any{"status": "ok", "data": data, "metadata": map[string]any{}}
	}
}

// interruptible is the context of work an interrupt cancels (Interrupt),
// until done is called.
func (k *Kernel) interruptible() (ctx context.Context, done func()) {
	ctx, cancel := context.WithCancel(context.Background())
	k.mu.Lock()
	k.cancel = cancel
	k.mu.Unlock()
	return ctx, func() {
		k.mu.Lock()
		k.cancel = nil
		k.mu.Unlock()
		cancel()
	}
}

func (k *Kernel) complete(m *Message) map[string]any {
	var req struct {
		Code   string `json:"code"`
		Cursor int    `json:"cursor_pos"`
	}
	_ = json.Unmarshal(m.Content, &req)
	c := k.h.Complete(req.Code, req.Cursor)
	matches := c.Matches
	if matches == nil {
		matches = []string{}
	}
	return map[string]any{"status": "ok", "matches": matches, "cursor_start": c.CursorStart, "cursor_end": c.CursorEnd, "metadata": map[string]any{}}
}

func (k *Kernel) inspect(m *Message) map[string]any {
	var req struct {
		Code   string `json:"code"`
		Cursor int    `json:"cursor_pos"`
		Detail int    `json:"detail_level"`
	}
	_ = json.Unmarshal(m.Content, &req)
	in := k.h.Inspect(req.Code, req.Cursor, req.Detail)
	data := in.Data
	if data == nil {
		data = map[string]any{}
	}
	return map[string]any{"status": "ok", "found": in.Found, "data": data, "metadata": map[string]any{}}
}

func (k *Kernel) isComplete(m *Message) map[string]any {
	var req struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(m.Content, &req)
	status, indent := k.h.IsComplete(req.Code)
	c := map[string]any{"status": status}
	if status == "incomplete" {
		c["indent"] = indent
	}
	return c
}

// reply sends a reply back through the request's identities.
func (k *Kernel) reply(sock zmq4.Socket, m *Message, msgType string, content any) {
	k.replyMeta(sock, m, msgType, content, nil)
}

// replyMeta sends a reply with metadata.
func (k *Kernel) replyMeta(sock zmq4.Socket, m *Message, msgType string, content any, meta map[string]any) {
	var metadata any // a nil map would be JSON null, not {}
	if meta != nil {
		metadata = meta
	}
	frames, err := k.sig.encode(m.Identities, newHeader(k.session, msgType), parentOf(m), metadata, content)
	if err == nil {
		err = sock.Send(zmq4.NewMsgFrom(frames...))
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(k.log, "kernel: %s: %v\n", msgType, err)
	}
}

// publish sends one iopub message whose parent is m (nil: none).
func (k *Kernel) publish(m *Message, msgType string, content any) {
	var parent json.RawMessage
	if m != nil {
		parent = parentOf(m)
	}
	topic := []byte("kernel." + k.session + "." + msgType)
	frames, err := k.sig.encode([][]byte{topic}, newHeader(k.session, msgType), parent, nil, content)
	if err != nil {
		fmt.Fprintf(k.log, "kernel: %s: %v\n", msgType, err)
		return
	}
	k.iopubMu.Lock()
	defer k.iopubMu.Unlock()
	if err := k.iopub.Send(zmq4.NewMsgFrom(frames...)); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(k.log, "kernel: iopub %s: %v\n", msgType, err)
	}
}

func (k *Kernel) publishStatus(m *Message, state string) {
	k.publish(m, "status", map[string]any{"execution_state": state})
}
