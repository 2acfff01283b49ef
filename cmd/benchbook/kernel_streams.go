package main

import (
	"fmt"
	"html"
	"io"
	"strings"
	"sync"

	"github.com/benchbook/benchbook/runtime/jupyter"
)

// liveLine is what a progress line starts with when it rewrites itself in
// place on a terminal (builtins/workload's live line).
const liveLine = "\r\033[K"

// kernelStream is one of the kernel's output streams: what the REPL's
// commands and the engine write goes to the running request's cell as
// stream output. The notices stream (the engine's progress and notices,
// "new cluster", the cells' outcome lines) is stdout, so a classic
// Notebook does not show them as errors, but for its "warning:" lines,
// which go to stderr as warnings do in Jupyter. A line rewritten in place
// ("\r\033[K...", the workload's live progress) goes to the request's
// status display, updated in place (display_id), so a long run shows one
// moving line, not thousands. Between requests, writes go to the kernel's
// log.
type kernelStream struct {
	name     string // "stdout" or "stderr"
	live     bool   // shows "\r"-rewritten lines in place: the engine's stream
	warnings string // where its "warning:" lines go ("": with the rest)
	log      io.Writer

	mu       sync.Mutex
	pub      *jupyter.Publisher // the running request; nil between requests
	statusID string             // display id of the request's status line, once shown
	resting  string             // what the status line shows when no live line is
	seq      int                // numbers status displays, unique per kernel
	logged   string             // the last line written between requests
}

// waiting is what an execution that waits for the engine shows: why, when
// the engine said (the cache lock another run holds).
func (s *kernelStream) waiting() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.HasPrefix(s.logged, "waiting") {
		return s.logged
	}
	return "waiting for the notebook's cache …"
}

// RewritesLines tells runtime.IsTerminal that "\r"-rewritten lines are shown
// in place, so the workload writes its live line, not a line per second.
func (s *kernelStream) RewritesLines() bool { return s.live }

// attach directs the stream to a request's outputs; detach ends that.
func (s *kernelStream) attach(p *jupyter.Publisher) {
	s.mu.Lock()
	s.pub, s.statusID, s.resting = p, "", ""
	s.mu.Unlock()
}

func (s *kernelStream) detach() { s.attach(nil) }

func (s *kernelStream) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	text := string(b)
	if s.pub == nil || s.pub.Closed() {
		if line := strings.TrimSpace(text); line != "" {
			s.logged = line
		}
		return s.log.Write(b)
	}
	for text != "" {
		i := strings.Index(text, liveLine)
		if i < 0 {
			s.emit(text)
			break
		}
		s.emit(text[:i])
		text = text[i+len(liveLine):]
		end := strings.IndexAny(text, "\r\n")
		if end < 0 {
			end = len(text)
		}
		line := text[:end]
		if line == "" { // the run ended and cleared its line
			line = s.resting
		}
		if line != "" || s.statusID != "" {
			s.show(statusBundle(line), nil)
		}
		text = strings.TrimPrefix(text[end:], "\n")
	}
	return len(b), nil
}

// emit publishes text, its warning lines on their stream.
func (s *kernelStream) emit(text string) {
	if s.warnings == "" {
		s.pub.Stream(s.name, text)
		return
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		name := s.name
		if strings.HasPrefix(line, "warning") {
			name = s.warnings
		}
		s.pub.Stream(name, line)
	}
}

// outcome shows a cell's outcome line: on the request's status line when
// one is shown (the cell's live line, or an upstream cell's progress),
// else as the first line of the cell's text output. A failure's outcome
// is left to the error when no status line is shown (the error's
// traceback says it), so a failing cell shows one error and nothing else.
// It reports whether it showed the line.
func (s *kernelStream) outcome(text string, meta map[string]any, failed bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.pub == nil:
		return false
	case s.statusID != "":
		s.resting = text
		s.show(statusBundle(text), meta)
		return true
	case failed:
		return false
	}
	s.pub.Stream(s.name, text+"\n")
	return true
}

// status shows text on the request's status line (a new display, or the
// one live lines have been updating: in a notebook the running line
// becomes the outcome), and keeps it as what the line goes back to when a
// live line clears. A terminal frontend (jupyter console) shows a display
// once and no update.
func (s *kernelStream) status(text string, meta map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pub == nil {
		return
	}
	s.resting = text
	s.show(statusBundle(text), meta)
}

// rest sets what the status line goes back to when a live line clears,
// without showing it: a quick cell shows only its outcome.
func (s *kernelStream) rest(text string) {
	s.mu.Lock()
	s.resting = text
	s.mu.Unlock()
}

// show displays the status line, creating it first.
func (s *kernelStream) show(data, meta map[string]any) {
	if s.statusID == "" {
		s.seq++
		s.statusID = fmt.Sprintf("benchbook-status-%d", s.seq)
		s.pub.Display(data, meta, s.statusID)
		return
	}
	s.pub.Update(data, meta, s.statusID)
}

// statusBundle is a status line: plain, and small and grey in HTML.
func statusBundle(line string) map[string]any {
	return map[string]any{
		"text/plain": line,
		"text/html":  `<pre style="margin:0;color:#777;font-size:85%">` + html.EscapeString(line) + `</pre>`,
	}
}
