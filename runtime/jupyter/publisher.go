package jupyter

import (
	"sync"
)

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
}

// Stream publishes text on "stdout" or "stderr".
func (p *Publisher) Stream(name, text string) {
	if text == "" {
		return
	}
	p.send("stream", map[string]any{"name": name, "text": text})
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
	p.closed = true
	p.mu.Unlock()
}

func (p *Publisher) send(msgType string, content map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.silent || p.closed {
		return
	}
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
