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

	iopubMu sync.Mutex
	count   int // execution counter
	history history

	mu      sync.Mutex
	cancel  context.CancelFunc // of the running execution; nil when idle
	stopped chan struct{}      // closed when shutdown was asked
	stopOne sync.Once

	shellQ chan *Message // shell requests received, not yet served

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
	k.shellQ = shellQ
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
			if n := k.handle(k.shell, m); n > 0 {
				k.abortQueued(q, n)
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

// handle answers one request between busy and idle statuses. It returns
// how many queued requests to abort: those queued when an execution that
// asked to stop on error failed.
func (k *Kernel) handle(sock zmq4.Socket, m *Message) (abort int) {
	k.publishStatus(m, "busy")
	defer k.publishStatus(m, "idle")
	var content any
	switch m.Header.MsgType {
	case "kernel_info_request":
		content = k.kernelInfo()
	case "execute_request":
		content, abort = k.execute(m)
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
		return 0
	default:
		// comm_open and friends: no comms here, and a reply to a message
		// that wants none would confuse the client.
		fmt.Fprintf(k.log, "kernel: ignored %s\n", m.Header.MsgType)
		return 0
	}
	k.reply(sock, m, replyType(m.Header.MsgType), content)
	return abort
}

func replyType(request string) string {
	base, _ := strings.CutSuffix(request, "_request")
	return base + "_reply"
}

// abortQueued answers the n executions queued behind a failed one with
// "aborted", as a kernel does for stop_on_error, and serves the other
// requests queued with them. What arrived after the failure (sent once the
// client saw it) runs.
func (k *Kernel) abortQueued(q <-chan *Message, n int) {
	for ; n > 0; n-- {
		m, ok := <-q
		if !ok {
			return
		}
		if m.Header.MsgType != "execute_request" {
			k.handle(k.shell, m)
			continue
		}
		k.publishStatus(m, "busy")
		k.reply(k.shell, m, "execute_reply", map[string]any{"status": "aborted", "execution_count": k.count})
		k.publishStatus(m, "idle")
	}
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

// execute runs one execute_request. It returns how many queued requests
// must be aborted: after a failure with stop_on_error, those queued before
// its reply goes out.
func (k *Kernel) execute(m *Message) (map[string]any, int) {
	req := &ExecuteRequest{StopOnError: true, StoreHistory: true}
	if err := json.Unmarshal(m.Content, req); err != nil {
		return map[string]any{"status": "error", "ename": "BadRequest", "evalue": err.Error(), "traceback": []string{}, "execution_count": k.count}, 0
	}
	var meta executeMetadata
	_ = json.Unmarshal(m.Metadata, &meta)
	req.CellID, req.DeletedCells = meta.CellID, meta.DeletedCells
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
		abort := 0
		if req.StopOnError {
			abort = len(k.shellQ)
		}
		return map[string]any{"status": "error", "execution_count": req.Count, "ename": failure.Name,
			"evalue": failure.Value, "traceback": failure.Traceback, "user_expressions": exprs}, abort
	}
	payload := req.Payload
	if payload == nil {
		payload = []any{}
	}
	k.userExpressions(req.UserExpressions, exprs)
	return map[string]any{"status": "ok", "execution_count": req.Count, "payload": payload, "user_expressions": exprs}, 0
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
	frames, err := k.sig.encode(m.Identities, newHeader(k.session, msgType), parentOf(m), nil, content)
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
