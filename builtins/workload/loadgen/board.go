package loadgen

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Board is the live progress of concurrent scenarios: one line each, its
// name first. Each scenario's engine writes its progress lines to its Slot
// as to a plain stream; on a terminal the board redraws the lines in place
// (one block, rewritten as any of them changes), elsewhere each line goes
// out as it comes.
type Board struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	names    []string
	lines    []string
	drawn    bool
}

// NewBoard is a board of one line per name on w.
func NewBoard(w io.Writer, terminal bool, names []string) *Board {
	width := 0
	for _, n := range names {
		width = max(width, len([]rune(n)))
	}
	padded := make([]string, len(names))
	for i, n := range names {
		padded[i] = n + strings.Repeat(" ", width-len([]rune(n)))
	}
	return &Board{w: w, terminal: terminal, names: padded, lines: make([]string, len(names))}
}

// Slot is scenario i's progress stream (a Spec.Progress, not a terminal).
func (b *Board) Slot(i int) io.Writer { return &boardSlot{b: b, i: i} }

type boardSlot struct {
	b       *Board
	i       int
	partial []byte
}

func (s *boardSlot) Write(p []byte) (int, error) {
	s.partial = append(s.partial, p...)
	for {
		nl := bytes.IndexByte(s.partial, '\n')
		if nl < 0 {
			break
		}
		line := strings.TrimRight(string(s.partial[:nl]), "\r")
		s.partial = s.partial[nl+1:]
		s.b.set(s.i, line)
	}
	return len(p), nil
}

func (b *Board) set(i int, line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines[i] = line
	if !b.terminal {
		fmt.Fprintf(b.w, "%s │ %s\n", b.names[i], line)
		return
	}
	b.up()
	for j, l := range b.lines {
		fmt.Fprintf(b.w, "\033[K%s │ %s", b.names[j], l)
		if j < len(b.lines)-1 {
			io.WriteString(b.w, "\n")
		}
	}
	b.drawn = true
}

// up moves a terminal's cursor to the start of the board's first line.
func (b *Board) up() {
	io.WriteString(b.w, "\r")
	if b.drawn && len(b.lines) > 1 {
		fmt.Fprintf(b.w, "\033[%dA", len(b.lines)-1)
	}
}

// Close clears a terminal's board, leaving the cursor where it began.
func (b *Board) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.terminal && b.drawn {
		b.up()
		io.WriteString(b.w, "\033[J")
		b.drawn = false
	}
}
