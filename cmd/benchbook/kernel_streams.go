package main

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/benchbook/benchbook/runtime/jupyter"
)

// liveLine is what a progress line starts with when it rewrites itself in
// place on a terminal (builtins/workload's live line).
const liveLine = "\r\033[K"

// kernelStream is one of the kernel's output streams (stdout or stderr):
// what the REPL's commands and the engine write goes to the running
// request's cell as stream output. A line rewritten in place ("\r\033[K...",
// the workload's live progress) becomes one display updated in place
// (display_id), so a long run shows one moving line, not thousands.
// Between requests, writes go to the kernel's log.
type kernelStream struct {
	name string // "stdout" or "stderr"
	log  io.Writer

	mu     sync.Mutex
	pub    *jupyter.Publisher // the running request; nil between requests
	liveID string             // display id of the request's live line, once shown
	seq    int                // numbers live displays, unique per kernel
}

// RewritesLines tells runtime.IsTerminal that "\r"-rewritten lines are shown
// in place, so the workload writes its live line, not a line per second.
func (s *kernelStream) RewritesLines() bool { return s.name == "stderr" }

// attach directs the stream to a request's outputs; detach ends that.
func (s *kernelStream) attach(p *jupyter.Publisher) {
	s.mu.Lock()
	s.pub, s.liveID = p, ""
	s.mu.Unlock()
}

func (s *kernelStream) detach() { s.attach(nil) }

func (s *kernelStream) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	text := string(b)
	if s.pub == nil || s.pub.Closed() {
		return s.log.Write(b)
	}
	for text != "" {
		i := strings.Index(text, liveLine)
		if i < 0 {
			s.pub.Stream(s.name, text)
			break
		}
		s.pub.Stream(s.name, text[:i])
		text = text[i+len(liveLine):]
		end := strings.IndexAny(text, "\r\n")
		if end < 0 {
			end = len(text)
		}
		s.live(text[:end])
		text = strings.TrimPrefix(text[end:], "\n")
	}
	return len(b), nil
}

// live shows line in the request's live display, creating it first. An
// empty line (the run ended and cleared it) empties the display.
func (s *kernelStream) live(line string) {
	data := map[string]any{"text/plain": line}
	if s.liveID == "" {
		if line == "" {
			return
		}
		s.seq++
		s.liveID = fmt.Sprintf("benchbook-progress-%d", s.seq)
		s.pub.Display(data, nil, s.liveID)
		return
	}
	s.pub.Update(data, nil, s.liveID)
}
