package jupyter

import (
	"strings"
	"sync"
	"time"
)

// streamDelay is how long stream text waits for more before it is sent:
// text written piece by piece (a table printed field by field) goes out as
// one message, and a long cell's output still shows as it comes.
const streamDelay = 50 * time.Millisecond

// Publisher sends one request's outputs on iopub, each with the request as
// its parent. It is safe for concurrent use (a workload's progress line is
// written from its own goroutine while the cell runs), and silent for a
// silent execution, which publishes nothing.
type Publisher struct {
	k      *Kernel
	parent *Message
	count  int
	silent bool

	mu     sync.Mutex
	closed bool   // the request has been answered: later writes are the kernel log's
	result string // the result's text/plain, for the history
	// Stream text not sent yet, of one stream; any other output, the
	// request's end, or streamDelay sends it first.
	pending     strings.Builder
	pendingName string
	flushTimer  *time.Timer
	replyMeta   map[string]any // the execute_reply's metadata
}

// SetReplyMetadata sets the metadata of the request's execute_reply (what
// a client such as nbclient's on_cell_executed hook reads beside the
// outputs).
func (p *Publisher) SetReplyMetadata(meta map[string]any) {
	p.mu.Lock()
	p.replyMeta = meta
	p.mu.Unlock()
}

func (p *Publisher) replyMetadata() map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.replyMeta
}

// Stream publishes text on "stdout" or "stderr". Consecutive text of one
// stream is sent as one message.
func (p *Publisher) Stream(name, text string) {
	if text == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.silent || p.closed {
		return
	}
	if p.pendingName != name {
		p.flushLocked()
		p.pendingName = name
	}
	p.pending.WriteString(text)
	if p.flushTimer == nil {
		p.flushTimer = time.AfterFunc(streamDelay, p.flush)
	}
}

func (p *Publisher) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flushLocked()
}

// flushLocked sends the pending stream text; p.mu is held.
func (p *Publisher) flushLocked() {
	if p.flushTimer != nil {
		p.flushTimer.Stop()
		p.flushTimer = nil
	}
	if p.pending.Len() == 0 {
		return
	}
	text := p.pending.String()
	p.pending.Reset()
	p.k.publish(p.parent, "stream", map[string]any{"name": p.pendingName, "text": text})
}

// Display publishes a display_data. With a displayID the display can be
// replaced later by Update.
func (p *Publisher) Display(data, metadata map[string]any, displayID string) {
	p.send("display_data", displayContent(data, metadata, displayID))
}

// Update replaces the display published with displayID.
func (p *Publisher) Update(data, metadata map[string]any, displayID string) {
	p.send("update_display_data", displayContent(data, metadata, displayID))
}

// ClearOutput clears the outputs the request's cell shows so far; with
// wait, only once the next output arrives (no flicker).
func (p *Publisher) ClearOutput(wait bool) {
	p.send("clear_output", map[string]any{"wait": wait})
}

// Result publishes the execution's result (Out [Count]).
func (p *Publisher) Result(data, metadata map[string]any) {
	c := displayContent(data, metadata, "")
	c["execution_count"] = p.count
	if text, ok := data["text/plain"].(string); ok {
		p.mu.Lock()
		p.result = text
		p.mu.Unlock()
	}
	p.send("execute_result", c)
}

// Closed reports whether the request has been answered: output written
// after that has no cell to go to.
func (p *Publisher) Closed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

func (p *Publisher) close() {
	p.mu.Lock()
	if !p.silent && !p.closed {
		p.flushLocked()
	}
	p.closed = true
	p.mu.Unlock()
}

func (p *Publisher) send(msgType string, content map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.silent || p.closed {
		return
	}
	p.flushLocked()
	p.k.publish(p.parent, msgType, content)
}

func displayContent(data, metadata map[string]any, displayID string) map[string]any {
	if metadata == nil {
		metadata = map[string]any{}
	}
	c := map[string]any{"data": data, "metadata": metadata, "transient": map[string]any{}}
	if displayID != "" {
		c["transient"] = map[string]any{"display_id": displayID}
	}
	return c
}
