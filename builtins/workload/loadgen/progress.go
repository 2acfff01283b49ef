package loadgen

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress writes a live line to stderr: "\r"-rewritten on a terminal, a
// plain line per second otherwise. It reads only atomic counters and the
// folded windows, so it costs the workers nothing.
type progress struct {
	done chan struct{}
	fin  chan struct{}
}

func startProgress(r *engine) *progress {
	p := &progress{done: make(chan struct{}), fin: make(chan struct{})}
	if r.spec.Progress == nil || r.spec.Progress == io.Discard {
		close(p.fin)
		return p
	}
	every := time.Second
	if r.spec.Terminal {
		every = 500 * time.Millisecond
	}
	go p.loop(r, every)
	return p
}

func (p *progress) stop() {
	select {
	case <-p.done:
	default:
		close(p.done)
	}
	<-p.fin
}

func (p *progress) loop(r *engine, every time.Duration) {
	defer close(p.fin)
	t := time.NewTicker(every)
	defer t.Stop()
	var last int64
	lastAt := time.Now()
	for {
		select {
		case <-p.done:
			if r.spec.Terminal {
				fmt.Fprint(r.spec.Progress, "\r\033[K")
			}
			return
		case now := <-t.C:
			done, errs := r.counts()
			rps := float64(done-last) / now.Sub(lastAt).Seconds()
			last, lastAt = done, now
			r.writeProgress(progressLine(r, now, rps, errs))
		}
	}
}

func (r *engine) counts() (done, errs int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.recs {
		done += rec.done.Load() + rec.warm.Load()
		errs += rec.errs.Load()
	}
	return done, errs
}

func progressLine(r *engine, now time.Time, rps float64, errs int64) string {
	total := r.spec.Warmup + r.spec.Duration
	el := min(now.Sub(r.start), total)
	phase := ""
	if now.Before(r.measureAt) {
		phase = " warmup"
	}
	return fmt.Sprintf("%s%s %4.1fs/%.0fs%s  %8.0f req/s  %s  errors %d",
		stepPrefix(r.spec.Step), progressLabel(r.spec.Label), el.Seconds(), total.Seconds(), phase, rps, p99Text(r, now), errs)
}

// p99Text is the newest closed window's p99, or why there is none yet: a
// bare "p99 -" left users guessing.
func p99Text(r *engine, now time.Time) string {
	switch v, ok := r.shared.lastP99(); {
	case ok:
		return fmt.Sprintf("p99 %s (last %s window)", FormatMs(v), r.spec.Window)
	case now.Before(r.measureAt):
		return "p99 not measured in warmup"
	}
	return fmt.Sprintf("p99 after the first %s window", r.spec.Window)
}

func stepPrefix(step string) string {
	if step == "" {
		return ""
	}
	return step + "  "
}

// maxProgressLabel bounds the label on the live line, which a terminal
// rewrites in place: one short line (a SQL label is a whole statement).
const maxProgressLabel = 50

func progressLabel(label string) string {
	s := strings.Join(strings.Fields(label), " ")
	if r := []rune(s); len(r) > maxProgressLabel {
		s = string(r[:maxProgressLabel-1]) + "…"
	}
	return s
}

func (r *engine) writeProgress(line string) {
	if r.spec.Terminal {
		fmt.Fprintf(r.spec.Progress, "\r\033[K%s", line)
		return
	}
	fmt.Fprintln(r.spec.Progress, line)
}
