package guard

import (
	"context"
	"sync"
	"time"
)

// Every calls fn every interval, on a goroutine of its own, until ctx ends
// or stop is called. stop returns once no call is under way, so what fn
// wrote may be read after it. Guards and observers that sample a process or
// the box during a run use it.
func Every(ctx context.Context, interval time.Duration, fn func()) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				fn()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}
