package jupyter

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

// fakeHandler answers "fail" with an error, "slow" by waiting 300 ms,
// "block" by waiting for its context, "clear" by clearing the output it
// printed, anything else by echoing it as the result. It evaluates a user
// expression "nope" to an error, any other to its text and the last code
// executed.
type fakeHandler struct {
	shutdown chan struct{}
	last     string // the code of the last execution
}

func (h *fakeHandler) Info() Info {
	return Info{Implementation: "fake", Language: LanguageInfo{Name: "fake"}}
}

func (h *fakeHandler) Execute(ctx context.Context, req *ExecuteRequest, out *Publisher) *Error {
	h.last = req.Code
	switch req.Code {
	case "fail":
		return &Error{Name: "E", Value: "failed"}
	case "slow":
		time.Sleep(300 * time.Millisecond)
		return &Error{Name: "E", Value: "slow failure"}
	case "block":
		<-ctx.Done()
		return &Error{Name: "KeyboardInterrupt", Value: "interrupted"}
	case "pieces": // a table printed field by field, then a result
		for i := range 60 {
			out.Stream("stdout", fmt.Sprintf("%d ", i))
		}
		out.Stream("stderr", "warning\n")
		out.Stream("stdout", "end\n")
		out.SetReplyMetadata(map[string]any{"fake": "meta"})
		out.Result(map[string]any{"text/plain": "done"}, nil)
		return nil
	case "clear":
		out.Stream("stdout", "soon gone\n")
		out.ClearOutput(false)
		return nil
	}
	out.Stream("stdout", "echo\n")
	out.Result(map[string]any{"text/plain": req.Code}, nil)
	return nil
}

func (h *fakeHandler) Complete(code string, cursor int) Completion { return Completion{} }
func (h *fakeHandler) Inspect(code string, cursor, detail int) Inspection {
	return Inspection{}
}
func (h *fakeHandler) IsComplete(code string) (string, string) { return "complete", "" }
func (h *fakeHandler) Evaluate(ctx context.Context, expr string) (map[string]any, *Error) {
	if expr == "nope" {
		return nil, &Error{Name: "NameError", Value: "nope: undefined"}
	}
	return map[string]any{"text/plain": expr + " after " + h.last}, nil
}
func (h *fakeHandler) Shutdown() { close(h.shutdown) }

// client is the frontend's side: shell and control DEALERs, the iopub SUB
// and the heartbeat REQ, signing with key.
type client struct {
	t                            *testing.T
	shell, control, iopub, hb    zmq4.Socket
	sig                          signer
	session                      string
	replies, controls, published chan *Message
}

func freePorts(t *testing.T, n int) []int {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// startKernel serves a fake handler on loopback and connects a client.
func startKernel(t *testing.T, key string) (*client, *fakeHandler, <-chan error) {
	p := freePorts(t, 5)
	conn := &Connection{Transport: "tcp", IP: "127.0.0.1", ShellPort: p[0], IOPubPort: p[1], StdinPort: p[2], ControlPort: p[3], HBPort: p[4], Key: key, SignatureScheme: "hmac-sha256"}
	b, _ := json.Marshal(conn)
	path := filepath.Join(t.TempDir(), "kernel.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	read, err := ReadConnection(path)
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHandler{shutdown: make(chan struct{})}
	k := New(read, h, nil)
	done := make(chan error, 1)
	go func() {
		done <- k.Run(context.Background())
		close(done)
	}()
	ctx, cancel := context.WithCancel(context.Background())
	c := &client{t: t, sig: signer{key: []byte(key)}, session: "test-session",
		shell:   zmq4.NewDealer(ctx, zmq4.WithID(zmq4.SocketIdentity("shell-client"))),
		control: zmq4.NewDealer(ctx, zmq4.WithID(zmq4.SocketIdentity("control-client"))),
		iopub:   zmq4.NewSub(ctx), hb: zmq4.NewReq(ctx),
		replies: make(chan *Message, 16), controls: make(chan *Message, 16), published: make(chan *Message, 64)}
	t.Cleanup(func() {
		k.Stop()
		<-done
		for _, s := range []zmq4.Socket{c.shell, c.control, c.iopub, c.hb} {
			s.Close()
		}
		cancel()
	})
	for _, d := range []struct {
		s    zmq4.Socket
		port int
	}{{c.shell, p[0]}, {c.iopub, p[1]}, {c.control, p[3]}, {c.hb, p[4]}} {
		if err := d.s.Dial(conn.endpoint(d.port)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.iopub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		t.Fatal(err)
	}
	go c.read(c.shell, c.replies)
	go c.read(c.control, c.controls)
	go c.read(c.iopub, c.published)
	// Until the subscription is through, iopub messages are lost: ask for
	// kernel_info until one comes with its status.
	for deadline := time.Now().Add(10 * time.Second); ; {
		c.send(c.shell, "kernel_info_request", map[string]any{})
		select {
		case <-c.published:
			<-c.replies
			c.drain()
			return c, h, done
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the kernel never published on iopub")
		}
	}
}

func (c *client) read(s zmq4.Socket, q chan<- *Message) {
	for {
		m, err := s.Recv()
		if err != nil {
			return
		}
		msg, err := c.sig.decode(m.Frames)
		if err != nil {
			c.t.Errorf("a message from the kernel: %v", err)
			continue
		}
		q <- msg
	}
}

func (c *client) drain() {
	for {
		select {
		case <-c.published:
		case <-c.replies:
		case <-time.After(300 * time.Millisecond):
			return
		}
	}
}

func (c *client) send(s zmq4.Socket, msgType string, content any) string {
	h := newHeader(c.session, msgType)
	frames, err := c.sig.encode(nil, h, nil, nil, content)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := s.Send(zmq4.NewMsgFrom(frames...)); err != nil {
		c.t.Fatal(err)
	}
	return h.MsgID
}

func (c *client) execute(code string) string {
	return c.send(c.shell, "execute_request", map[string]any{"code": code, "silent": false, "store_history": true, "stop_on_error": true})
}

func reply(t *testing.T, q <-chan *Message, timeout time.Duration) *Message {
	t.Helper()
	select {
	case m := <-q:
		return m
	case <-time.After(timeout):
		t.Fatal("no reply")
		return nil
	}
}

func content(t *testing.T, m *Message) map[string]any {
	var c map[string]any
	if err := json.Unmarshal(m.Content, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func parentID(m *Message) string {
	var h Header
	_ = json.Unmarshal(m.Parent, &h)
	return h.MsgID
}

// A request signed with another key is dropped; one signed with the
// connection's key is answered, signed, with the request as its parent.
func TestOnlySignedRequestsAreAnswered(t *testing.T) {
	c, _, _ := startKernel(t, "right-key")
	forged := &client{t: t, sig: signer{key: []byte("wrong-key")}, session: "forger"}
	forged.send(c.shell, "kernel_info_request", map[string]any{})
	select {
	case m := <-c.replies:
		t.Fatalf("a forged request was answered: %s", m.Header.MsgType)
	case <-time.After(500 * time.Millisecond):
	}
	id := c.send(c.shell, "kernel_info_request", map[string]any{})
	m := reply(t, c.replies, 5*time.Second)
	if m.Header.MsgType != "kernel_info_reply" || parentID(m) != id || content(t, m)["protocol_version"] != ProtocolVersion {
		t.Fatalf("reply %s to %s, content %s", m.Header.MsgType, parentID(m), m.Content)
	}
}

// An execution publishes busy, its input, its outputs and idle, in order,
// each with the request as parent.
func TestExecutePublishesInOrder(t *testing.T) {
	c, _, _ := startKernel(t, "k")
	id := c.execute("1 + 1")
	if r := content(t, reply(t, c.replies, 5*time.Second)); r["status"] != "ok" || r["execution_count"] != 1.0 {
		t.Fatalf("reply %v", r)
	}
	var got []string
	for len(got) < 5 {
		m := reply(t, c.published, 5*time.Second)
		if parentID(m) != id {
			continue
		}
		kind := m.Header.MsgType
		if kind == "status" {
			kind += ":" + content(t, m)["execution_state"].(string)
		}
		got = append(got, kind)
	}
	want := []string{"status:busy", "execute_input", "stream", "execute_result", "status:idle"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("published %v, want %v", got, want)
	}
}

// After a failed execution that asked to stop on error, the executions
// queued behind it are answered "aborted", not run.
func TestStopOnErrorAbortsTheQueue(t *testing.T) {
	c, _, _ := startKernel(t, "k")
	c.execute("slow")
	c.execute("1")
	c.execute("2")
	var statuses []any
	for range 3 {
		statuses = append(statuses, content(t, reply(t, c.replies, 5*time.Second))["status"])
	}
	if fmt.Sprint(statuses) != "[error aborted aborted]" {
		t.Fatalf("statuses %v", statuses)
	}
	time.Sleep(2 * abortWindow) // the frontend saw the error, and the user runs a cell again
	if r := content(t, (func() *Message { c.execute("3"); return reply(t, c.replies, 5*time.Second) })()); r["status"] != "ok" {
		t.Fatalf("an execution after the aborted ones: %v", r)
	}
}

// "Run All" sends every cell at once: after a failure, every one of
// 200 executions sent with it is aborted, not only those that had reached
// the kernel's queue when the failure's reply went out; the requests of
// other kinds among them are answered, and so is an execution the client
// made once it saw the failure.
func TestStopOnErrorAbortsWhatFollows(t *testing.T) {
	c, _, _ := startKernel(t, "k")
	c.execute("slow") // fails after 300 ms, the other cells sent meanwhile
	const n = 200
	for i := range n {
		if i == n/2 {
			c.send(c.shell, "kernel_info_request", map[string]any{})
		}
		c.execute(fmt.Sprint(i))
	}
	statuses := map[string]int{}
	for range n + 2 {
		m := reply(t, c.replies, 10*time.Second)
		if m.Header.MsgType == "kernel_info_reply" {
			statuses["kernel_info"]++
			continue
		}
		statuses[fmt.Sprint(content(t, m)["status"])]++
	}
	if statuses["error"] != 1 || statuses["aborted"] != n || statuses["kernel_info"] != 1 {
		t.Fatalf("replies %v, want 1 error, %d aborted and the kernel_info answered", statuses, n)
	}
	// Sent once the failure was seen, at once (nbclient, a console): it runs.
	c.execute("after")
	if r := content(t, reply(t, c.replies, 5*time.Second)); r["status"] != "ok" {
		t.Fatalf("an execution made after the failure was answered: %v", r)
	}
}

// Stream text written piece by piece goes out as one message per stream
// run, before the output that follows it; the handler's reply metadata
// reaches the execute_reply.
func TestStreamsCoalesce(t *testing.T) {
	c, _, _ := startKernel(t, "k")
	id := c.execute("pieces")
	r := reply(t, c.replies, 5*time.Second)
	if string(r.Metadata) != `{"fake":"meta"}` {
		t.Errorf("reply metadata %s", r.Metadata)
	}
	var got []string
	for {
		m := reply(t, c.published, 5*time.Second)
		if parentID(m) != id {
			continue
		}
		cm := content(t, m)
		switch m.Header.MsgType {
		case "stream":
			got = append(got, fmt.Sprintf("%s:%d", cm["name"], strings.Count(cm["text"].(string), " ")+strings.Count(cm["text"].(string), "\n")))
		case "status":
			if cm["execution_state"] == "idle" {
				want := "[stdout:60 stderr:1 stdout:1 execute_result]"
				if fmt.Sprint(got) != want {
					t.Fatalf("published %v, want %s", got, want)
				}
				return
			}
		case "execute_input":
		default:
			got = append(got, m.Header.MsgType)
		}
	}
}

// An interrupt_request on the control channel cancels the running
// execution at once; the heartbeat answers meanwhile; shutdown_request
// stops the kernel and its handler.
func TestInterruptHeartbeatShutdown(t *testing.T) {
	c, h, done := startKernel(t, "k")
	id := c.execute("block")
	time.Sleep(100 * time.Millisecond)
	if err := c.hb.Send(zmq4.NewMsgString("ping")); err != nil {
		t.Fatal(err)
	}
	if m, err := c.hb.Recv(); err != nil || string(m.Bytes()) != "ping" {
		t.Fatalf("heartbeat: %q, %v", m.Bytes(), err)
	}
	sent := time.Now()
	c.send(c.control, "interrupt_request", map[string]any{})
	r := reply(t, c.replies, 2*time.Second)
	if parentID(r) != id || content(t, r)["ename"] != "KeyboardInterrupt" || time.Since(sent) > time.Second {
		t.Fatalf("after %v: %s", time.Since(sent), r.Content)
	}
	c.send(c.control, "shutdown_request", map[string]any{"restart": false})
	if m := reply(t, c.controls, 5*time.Second); m.Header.MsgType != "interrupt_reply" {
		t.Fatalf("control replied %s first", m.Header.MsgType)
	}
	if m := reply(t, c.controls, 5*time.Second); m.Header.MsgType != "shutdown_reply" {
		t.Fatalf("control replied %s", m.Header.MsgType)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after shutdown_request")
	}
	select {
	case <-h.shutdown:
	default:
		t.Fatal("the handler was not shut down")
	}
}

func TestHistorySearch(t *testing.T) {
	var h history
	for i, code := range []string{"1 + 2", "x = 1", "1 + 2", "10 + 2"} {
		h.add(i+1, code, "")
	}
	count := func(req historyRequest) int { return len(h.query(req)) }
	for _, tc := range []struct {
		req  historyRequest
		want int
	}{
		{historyRequest{Access: "tail", N: 2}, 2},
		{historyRequest{Access: "range", Start: 2, Stop: 4}, 2},
		{historyRequest{Access: "search", Pattern: "1*"}, 3},
		{historyRequest{Access: "search", Pattern: "1 ?*", Unique: true}, 1},
		{historyRequest{Access: "search", Pattern: "*"}, 4},
	} {
		if got := count(tc.req); got != tc.want {
			t.Errorf("%+v: %d entries, want %d", tc.req, got, tc.want)
		}
	}
}

// user_expressions are evaluated after the code, each to a MIME bundle or
// an error dict; a failed execution answers {}; a silent one evaluates
// them too (frontends read state that way).
func TestUserExpressions(t *testing.T) {
	c, _, _ := startKernel(t, "k")
	send := func(code string, silent bool) map[string]any {
		c.send(c.shell, "execute_request", map[string]any{"code": code, "silent": silent, "store_history": !silent,
			"stop_on_error": false, "user_expressions": map[string]any{"a": "x", "bad": "nope"}})
		return content(t, reply(t, c.replies, 5*time.Second))
	}
	for _, silent := range []bool{false, true} {
		r := send("code1", silent)
		exprs, _ := r["user_expressions"].(map[string]any)
		a, _ := exprs["a"].(map[string]any)
		bad, _ := exprs["bad"].(map[string]any)
		if a["status"] != "ok" || fmt.Sprint(a["data"]) != "map[text/plain:x after code1]" || a["metadata"] == nil {
			t.Errorf("silent=%v: a = %v, want ok, its bundle, evaluated after the code", silent, a)
		}
		if bad["status"] != "error" || bad["ename"] != "NameError" || bad["evalue"] != "nope: undefined" || bad["traceback"] == nil {
			t.Errorf("silent=%v: bad = %v, want an error dict", silent, bad)
		}
	}
	if r := send("fail", false); r["status"] != "error" || fmt.Sprint(r["user_expressions"]) != "map[]" {
		t.Errorf("a failed execution: %v, want user_expressions {}", r)
	}
}

// A handler's ClearOutput reaches the frontend as clear_output, after
// what it clears.
func TestClearOutput(t *testing.T) {
	c, _, _ := startKernel(t, "k")
	id := c.execute("clear")
	reply(t, c.replies, 5*time.Second)
	var got []string
	for len(got) < 2 {
		m := reply(t, c.published, 5*time.Second)
		if parentID(m) != id || m.Header.MsgType == "status" || m.Header.MsgType == "execute_input" {
			continue
		}
		got = append(got, fmt.Sprint(m.Header.MsgType, content(t, m)))
	}
	if got[0] != "streammap[name:stdout text:soon gone\n]" || got[1] != "clear_outputmap[wait:false]" {
		t.Fatalf("published %q", got)
	}
}
