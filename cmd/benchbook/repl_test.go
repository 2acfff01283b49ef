package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/benchbook/benchbook/builtins/hidden"
	"github.com/benchbook/benchbook/runtime"
)

// binary is benchbook built once for the tests that drive it as a user
// would: through a terminal, a pipe, signals.
var binary string

func TestMain(m *testing.M) {
	hidden.Run()      // the supervisor, the reaper and backend.demo re-execute the test binary
	serveAgentChild() // workload.agents(local = N) re-executes the test binary as its agents
	dir, err := os.MkdirTemp("", "benchbook-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "benchbook")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building benchbook:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// replNotebook has a quick chain (base -> answer) and a cell slow enough
// (tens of seconds of Starlark loop) that only Ctrl-C ends it in time.
const replNotebook = `# %% [markdown]
# # REPL test

# %% base
base = 40

# %% answer
answer = base + 2
answer

# %% slow
def spin(n):
    t = 0
    for i in range(n):
        t += 1
    return t

spun = spin(param("spins", 1000))
`

func writeNotebook(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nb.star")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// terminal is benchbook running on a pseudo-terminal, with what it printed.
type terminal struct {
	t    *testing.T
	cmd  *exec.Cmd
	pty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer // everything printed, escape sequences removed
	seen int          // expect consumed out up to here
	more chan struct{}
	done chan struct{}
}

func startTerminal(t *testing.T, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "TERM=xterm")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, cmd: cmd, pty: f, more: make(chan struct{}, 1), done: make(chan struct{})}
	go term.read()
	t.Cleanup(func() {
		cmd.Process.Kill()
		f.Close()
		<-term.done
		if t.Failed() || testing.Verbose() {
			t.Logf("terminal output:\n%s", term.text())
		}
	})
	return term
}

var escapes = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]|\r`)

func (term *terminal) read() {
	defer close(term.done)
	buf := make([]byte, 4096)
	for {
		n, err := term.pty.Read(buf)
		if n > 0 {
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			select {
			case term.more <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

func (term *terminal) text() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return escapes.ReplaceAllString(term.out.String(), "")
}

// expect waits until want appears after what earlier expects consumed and
// returns the text up to and including it.
func (term *terminal) expect(want string, timeout time.Duration) string {
	term.t.Helper()
	deadline := time.After(timeout)
	for {
		text := term.text()
		if i := strings.Index(text[term.seen:], want); i >= 0 {
			got := text[term.seen : term.seen+i+len(want)]
			term.seen += i + len(want)
			return got
		}
		select {
		case <-term.more:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			term.t.Fatalf("no %q within %v; since the last match:\n%s", want, timeout, text[term.seen:])
		}
	}
}

func (term *terminal) send(keys string) {
	term.t.Helper()
	if _, err := term.pty.Write([]byte(keys)); err != nil {
		term.t.Fatal(err)
	}
}

// wait waits for the process to exit and returns its exit code.
func (term *terminal) wait(timeout time.Duration) int {
	term.t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- term.cmd.Wait() }()
	select {
	case err := <-exited:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			term.t.Fatal(err)
		}
		return 0
	case <-time.After(timeout):
		term.t.Fatalf("still running after %v", timeout)
	}
	return -1
}

// prompt is a fresh prompt: readline redraws the line being typed, prompt
// included, at every keystroke, but only a new prompt starts a line.
const prompt = "\n>>> "

// TestREPLTerminal types at the REPL as a user would.
func TestREPLTerminal(t *testing.T) {
	nb := writeNotebook(t, replNotebook)
	term := startTerminal(t, "repl", "-p", "spins=400000000", nb)
	term.expect(prompt, 10*time.Second)

	// value computed on first use
	{
		term.send("answer * 10\r")
		term.expect("420", 10*time.Second)
		term.expect(prompt, 5*time.Second)
	}
	// multi-line def
	{
		term.send("def double(x):\r")
		term.expect("\n... ", 5*time.Second)
		term.send("    return 2 * x\r")
		term.expect("\n... ", 5*time.Second)
		term.send("\r")
		term.expect(prompt, 5*time.Second)
		term.send("double(answer) + 1000\r")
		term.expect("1084", 5*time.Second)
		term.expect(prompt, 5*time.Second)
	}
	// history recall
	{
		term.send("\x1b[A\r") // up-arrow: the last input again
		term.expect("1084", 5*time.Second)
		term.expect(prompt, 5*time.Second)
	}
	// :run NAME forces the cell
	{
		term.send(":run answer\r")
		got := term.expect(prompt, 10*time.Second)
		if !regexp.MustCompile(`ran +answer`).MatchString(got) || !strings.Contains(got, "\n42\n") {
			t.Fatalf(":run answer printed %q, want the cell ran and showed 42", got)
		}
	}
	// :cells
	{
		term.send(":cells\r")
		got := term.expect(prompt, 5*time.Second)
		if !regexp.MustCompile(`(?m)^base\s+hit`).MatchString(got) || !regexp.MustCompile(`(?m)^slow\s+stale`).MatchString(got) {
			t.Fatalf(":cells printed %q, want base hit and slow stale", got)
		}
	}
	// Ctrl-C at an empty prompt does not exit
	{
		term.send("\x03")
		term.expect("Ctrl-D or :quit", 5*time.Second)
		term.send("7*6\r")
		term.expect("42", 5*time.Second)
		term.expect(prompt, 5*time.Second)
	}
	// Ctrl-C cancels a long cell
	{
		term.send(":run slow\r")
		term.expect("run slow", 10*time.Second)
		time.Sleep(300 * time.Millisecond) // well inside the loop
		start := time.Now()
		term.send("\x03")
		got := term.expect(prompt, 5*time.Second)
		if took := time.Since(start); took > time.Second {
			t.Errorf("the prompt came back %v after Ctrl-C, want under 1s", took)
		}
		if !strings.Contains(got, "interrupted") {
			t.Errorf("after Ctrl-C: %q, want it to say interrupted", got)
		}
	}
	// an error prints its backtrace and keeps the session
	{
		term.send("def f(x):\r")
		term.send("    return x // 0\r")
		term.send("\r")
		term.expect(prompt, 5*time.Second)
		term.send("f(answer)\r")
		got := term.expect(prompt, 5*time.Second)
		if !strings.Contains(got, "Traceback") || !strings.Contains(got, "division by zero") {
			t.Fatalf("error printed %q, want a traceback and the message", got)
		}
		term.send("double(base)\r")
		term.expect("80", 5*time.Second)
		term.expect(prompt, 5*time.Second)
	}
	// :params, :reload and :render
	{
		term.send(":params spins=5\r")
		term.expect("spins=5", 5*time.Second)
		term.expect(prompt, 5*time.Second)
		term.send("spun + 1000\r")
		term.expect("1005", 10*time.Second)
		term.expect(prompt, 5*time.Second)
		edit(t, nb, strings.Replace(replNotebook, "base + 2", "base + 3", 1))
		term.send(":reload\r")
		got := term.expect(prompt, 5*time.Second)
		if !strings.Contains(got, "edited: answer") {
			t.Errorf(":reload printed %q, want edited: answer", got)
		}
		term.send(":run answer\r")
		if got := term.expect(prompt, 10*time.Second); !strings.Contains(got, "\n43\n") {
			t.Errorf(":run answer after :reload printed %q, want the edited cell's 43", got)
		}
		md := filepath.Join(filepath.Dir(nb), "out.md")
		term.send(":render " + md + "\r")
		term.expect("wrote "+md, 5*time.Second)
		term.expect(prompt, 5*time.Second)
		if data, err := os.ReadFile(md); err != nil || !strings.Contains(string(data), "answer = base + 3") {
			t.Errorf(":render wrote %q, %v; want the edited notebook's record", data, err)
		}
	}
	// Ctrl-D exits
	{
		term.send("\x04")
		if code := term.wait(5 * time.Second); code != 0 {
			t.Fatalf("exit code %d after Ctrl-D, want 0", code)
		}
	}
	history, err := os.ReadFile(filepath.Join(runtime.DefaultCacheDir(nb), "repl_history"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(history), "double(answer) + 1000") {
		t.Errorf("history file holds %q, want the inputs typed", history)
	}
}

// TestREPLPiped scripts the REPL through standard input.
func TestREPLPiped(t *testing.T) {
	nb := writeNotebook(t, replNotebook)
	cmd := exec.Command(binary, "repl", nb)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Stdin = strings.NewReader(":cells\n1+1\ndef triple(x):\n    return 3 * x\n\ntriple(answer)\n:deps base\nundefined_name\n:show answer\n" +
		"table([{\"db_cpu_us_per_req\": 412.5, \"arm\": \"A\"}])\nmd(\"**IMPROVES** by `12 %`\")\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"CELL", "\n2\n", "\n126\n", "base reads: (none)", "used by: answer\n", "answer: ran", "\n42\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, ">>>") {
		t.Errorf("piped input printed prompts:\n%s", out)
	}
	// Markdown values are shown as text, not as markup (issue 33).
	for _, want := range []string{"db_cpu_us_per_req  arm\n", "IMPROVES by 12 %\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, raw := range []string{`db\_cpu`, "**IMPROVES**", "| arm"} {
		if strings.Contains(out, raw) {
			t.Errorf("stdout shows raw Markdown %q:\n%s", raw, out)
		}
	}
	if !strings.Contains(stderr.String(), "undefined_name") {
		t.Errorf("stderr does not report the undefined name:\n%s", stderr.String())
	}
}

// TestREPLRunResumesCheckpoints: :run NAME runs a cell again reusing its
// valid memo checkpoints (it threw them away: a user who typed it to
// resume an interrupted abab lost the pairs measured, twice); :rerun NAME
// ignores them, as -rerun does. Each execution of the memoized command
// prints its progress line; a reused checkpoint prints none.
func TestREPLRunResumesCheckpoints(t *testing.T) {
	nb := writeNotebook(t, "# %% runs\nr = memo(\"one\", lambda: workload.exec([\"true\"], runs = 1, warmup = 0).count)\nr\n")
	cmd := exec.Command(binary, "repl", nb)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Stdin = strings.NewReader(":run runs\n:run runs\n:rerun runs\n:help\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	// In order: the first :run measures; the second reuses the checkpoint;
	// :rerun measures again.
	events := regexp.MustCompile(`true: run 1/1|run again \(:run runs; valid checkpoints reused\)|forced \(:rerun runs\)`).FindAllString(stderr.String(), -1)
	want := []string{"true: run 1/1", "run again (:run runs; valid checkpoints reused)", "run again (:run runs; valid checkpoints reused)",
		"true: run 1/1", "forced (:rerun runs)"}
	if strings.Join(events, "\n") != strings.Join(want, "\n") {
		t.Errorf("what the three commands did:\n%s\nwant:\n%s\nstderr:\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"), stderr.String())
	}
	if !regexp.MustCompile(`(?m)^\s*:rerun NAME\s+run cell NAME from scratch`).MatchString(stdout.String()) {
		t.Errorf(":help does not list :rerun:\n%s", stdout.String())
	}
}

// TestREPLCtrlCWorkload interrupts a 10 s HTTP workload: the prompt must
// come back within a second and the session go on.
func TestREPLCtrlCWorkload(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond)
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	nb := writeNotebook(t, `# %% load
res = workload.http(param("url", "http://127.0.0.1:1/"), clients = 2, duration = "10s", warmup = "0s")
res
`)
	term := startTerminal(t, "repl", "-p", "url="+srv.URL, nb)
	term.expect(prompt, 10*time.Second)
	term.send(":run load\r")
	term.expect("run load", 10*time.Second)
	time.Sleep(time.Second) // measuring by now
	start := time.Now()
	term.send("\x03")
	got := term.expect(prompt, 5*time.Second)
	if took := time.Since(start); took > time.Second {
		t.Errorf("the prompt came back %v after Ctrl-C, want under 1s", took)
	}
	if !strings.Contains(got, "interrupted") {
		t.Errorf("after Ctrl-C: %q, want it to say interrupted", got)
	}
	term.send("7*6\r")
	term.expect("42", 5*time.Second)
	term.expect(prompt, 5*time.Second)
	term.send(":quit\r")
	if code := term.wait(5 * time.Second); code != 0 {
		t.Errorf("exit code %d after :quit, want 0", code)
	}
}
