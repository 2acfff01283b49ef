package loadgen

import (
	"fmt"
	"io"
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
	p99 := "-"
	if v, ok := r.shared.lastP99(); ok {
		p99 = FormatMs(v)
	}
	return fmt.Sprintf("%s %4.1fs/%.0fs%s  %8.0f req/s  p99 %s  errors %d",
		r.spec.Label, el.Seconds(), total.Seconds(), phase, rps, p99, errs)
}

func (r *engine) writeProgress(line string) {
	if r.spec.Terminal {
		fmt.Fprintf(r.spec.Progress, "\r\033[K%s", line)
		return
	}
	fmt.Fprintln(r.spec.Progress, line)
}
