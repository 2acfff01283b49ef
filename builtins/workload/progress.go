package workload

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progress writes a live line to stderr: "\r"-rewritten on a terminal, a
// plain line per second otherwise. It reads only atomic counters and the
// folded windows, so it costs the workers nothing.
type progress struct {
	done chan struct{}
	fin  chan struct{}
}

func isTerminal(w io.Writer) bool {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok { // the redacting writer
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func startProgress(r *run) *progress {
	p := &progress{done: make(chan struct{}), fin: make(chan struct{})}
	if r.spec.progress == nil || r.spec.progress == io.Discard {
		close(p.fin)
		return p
	}
	every := time.Second
	if r.spec.terminal {
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

func (p *progress) loop(r *run, every time.Duration) {
	defer close(p.fin)
	t := time.NewTicker(every)
	defer t.Stop()
	var last int64
	lastAt := time.Now()
	for {
		select {
		case <-p.done:
			if r.spec.terminal {
				fmt.Fprint(r.spec.progress, "\r\033[K")
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

func (r *run) counts() (done, errs int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.recs {
		done += rec.done.Load() + rec.warm.Load()
		errs += rec.errs.Load()
	}
	return done, errs
}

func progressLine(r *run, now time.Time, rps float64, errs int64) string {
	total := r.spec.warmup + r.spec.duration
	el := min(now.Sub(r.start), total)
	phase := ""
	if now.Before(r.measureAt) {
		phase = " warmup"
	}
	p99 := "-"
	if v, ok := r.shared.lastP99(); ok {
		p99 = fmtMs(v)
	}
	return fmt.Sprintf("%s %4.1fs/%.0fs%s  %8.0f req/s  p99 %s  errors %d",
		r.spec.label, el.Seconds(), total.Seconds(), phase, rps, p99, errs)
}

func (r *run) writeProgress(line string) {
	if r.spec.terminal {
		fmt.Fprintf(r.spec.progress, "\r\033[K%s", line)
		return
	}
	fmt.Fprintln(r.spec.progress, line)
}
