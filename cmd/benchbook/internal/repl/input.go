package repl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/chzyer/readline"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/cmd/benchbook/internal/hardstop"
)

// errPromptInterrupt is Ctrl-C typed at the prompt: the line is dropped, the
// REPL goes on.
var errPromptInterrupt = errors.New("interrupt at the prompt")

// lineReader reads one line of input after showing a prompt. io.EOF means
// the user is done (Ctrl-D or end of piped input).
type lineReader interface {
	ReadLine(prompt string) (string, error)
	Close() error
}

// ttyReader edits lines with readline: history, completion, raw-mode Ctrl-C.
type ttyReader struct{ rl *readline.Instance }

func newTTYReader(stdin *os.File, historyFile string, complete readline.AutoCompleter, stdout, stderr io.Writer) (*ttyReader, error) {
	rl, err := readline.NewEx(&readline.Config{
		Prompt:            ">>> ",
		HistoryFile:       historyFile,
		HistoryLimit:      1000,
		AutoComplete:      complete,
		InterruptPrompt:   "^C",
		EOFPrompt:         "",
		HistorySearchFold: true,
		Stdin:             stdin,
		Stdout:            stdout,
		Stderr:            stderr,
	})
	if err != nil {
		return nil, fmt.Errorf("line editor: %w", err)
	}
	return &ttyReader{rl: rl}, nil
}

func (t *ttyReader) ReadLine(prompt string) (string, error) {
	t.rl.SetPrompt(prompt)
	line, err := t.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return line, errPromptInterrupt
	}
	return line, err
}

func (t *ttyReader) Close() error { return t.rl.Close() }

// plainReader reads piped input line by line, without echo or prompts, so a
// script's output is only what its inputs print. Lines are read on their own
// goroutine so that Close (SIGTERM) can end a blocked read.
type plainReader struct {
	lines chan string
	err   error // set before lines is closed
	done  chan struct{}
	once  sync.Once
}

func newPlainReader(r io.Reader) *plainReader {
	p := &plainReader{lines: make(chan string), done: make(chan struct{})}
	go p.scan(r)
	return p
}

func (p *plainReader) scan(r io.Reader) {
	defer close(p.lines)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		select {
		case p.lines <- sc.Text():
		case <-p.done:
			return
		}
	}
	p.err = sc.Err()
}

func (p *plainReader) ReadLine(string) (string, error) {
	select {
	case line, ok := <-p.lines:
		if !ok {
			if p.err != nil {
				return "", p.err
			}
			return "", io.EOF
		}
		return line, nil
	case <-p.done:
		return "", io.EOF
	}
}

func (p *plainReader) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

// interrupts turns SIGINT into the cancellation of the running input, or a
// hint when nothing runs (Ctrl-C never exits the REPL), and SIGTERM into the
// end of the session.
type interrupts struct {
	mu      sync.Mutex
	cancel  context.CancelFunc // of the running input; nil at the prompt
	sigs    chan os.Signal
	idle    func() // SIGINT at the prompt
	term    func() // SIGTERM
	stopped chan struct{}
}

func watchInterrupts(idle, term func()) *interrupts {
	in := &interrupts{sigs: make(chan os.Signal, 4), idle: idle, term: term, stopped: make(chan struct{})}
	signal.Notify(in.sigs, os.Interrupt, syscall.SIGTERM)
	go in.loop()
	return in
}

func (in *interrupts) loop() {
	defer close(in.stopped)
	for sig := range in.sigs {
		in.mu.Lock()
		cancel := in.cancel
		in.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		switch {
		case sig == syscall.SIGTERM:
			in.term()
			go hardstop.ExitAfterGrace(os.Stderr, "still busy %v after SIGTERM: stopped; finished cells are cached")
		case cancel == nil:
			in.idle()
		}
	}
}

// run calls fn with a context that the next SIGINT cancels.
func (in *interrupts) run(base context.Context, fn func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(base)
	defer cancel()
	in.mu.Lock()
	in.cancel = cancel
	in.mu.Unlock()
	defer func() {
		in.mu.Lock()
		in.cancel = nil
		in.mu.Unlock()
	}()
	fn(ctx)
}

func (in *interrupts) stop() {
	signal.Stop(in.sigs)
	close(in.sigs)
	<-in.stopped
}

// completer completes :commands, cell names after the commands that take
// one, module members after a dot, and global and builtin names.
type completer struct {
	globals func() []string // notebook globals, REPL scratch names
	cells   func() []string
	values  starlark.StringDict // builtins, for members after a dot
	// peek gives a global's value when it is at hand without running a
	// cell, for its attributes after a dot (tps.me<Tab>); may be nil.
	peek func(name string) (starlark.Value, bool)
}

func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	before := string(line[:pos])
	if strings.HasPrefix(before, ":") {
		return c.command(before)
	}
	word := lastWord(before)
	if mod, member, ok := strings.Cut(word, "."); ok {
		return suffixes(c.members(mod), member), len([]rune(member))
	}
	names := append(c.globals(), c.values.Keys()...)
	return suffixes(names, word), len([]rune(word))
}

func (c *completer) command(before string) ([][]rune, int) {
	cmd, arg, hasArg := strings.Cut(before, " ")
	if !hasArg {
		return suffixes(replCommandNames(), cmd), len([]rune(cmd))
	}
	switch cmd {
	case ":run", ":rerun", ":show", ":deps":
		arg = strings.TrimLeft(arg, " ")
		return suffixes(c.cells(), arg), len([]rune(arg))
	}
	return nil, 0
}

func (c *completer) members(mod string) []string {
	v, ok := c.values[mod]
	if !ok && c.peek != nil {
		v, ok = c.peek(mod)
	}
	if !ok {
		return nil
	}
	if ha, ok := v.(starlark.HasAttrs); ok {
		return ha.AttrNames()
	}
	return nil
}

// lastWord is the identifier (with dots) that ends s.
func lastWord(s string) string {
	i := len(s)
	for i > 0 {
		ch := s[i-1]
		if ch != '_' && ch != '.' && !('a' <= ch && ch <= 'z') && !('A' <= ch && ch <= 'Z') && !('0' <= ch && ch <= '9') {
			break
		}
		i--
	}
	return s[i:]
}

// suffixes returns, sorted and unique, what completes prefix to each name.
func suffixes(names []string, prefix string) [][]rune {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	res := make([][]rune, len(out))
	for i, n := range out {
		res[i] = []rune(n[len(prefix):])
	}
	return res
}
