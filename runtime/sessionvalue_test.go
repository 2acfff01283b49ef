package runtime

import (
	"sync"
	"testing"

	"go.starlark.net/starlark"
)

type counterKey struct{}

type counter struct {
	mu sync.Mutex
	n  int
}

// Each session has its own value under a key, made once however many
// threads ask at the same time; a bare thread keeps nothing.
func TestSessionValue(t *testing.T) {
	made := 0
	newCounter := func() *counter { made++; return &counter{} }
	a, b := &Session{}, &Session{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := SessionValue(a.NewThread(&Cell{}), counterKey{}, newCounter)
			c.mu.Lock()
			c.n++
			c.mu.Unlock()
		}()
	}
	wg.Wait()
	if got := SessionValue(a.NewThread(&Cell{}), counterKey{}, newCounter).n; got != 8 || made != 1 {
		t.Errorf("session a: n = %d after 8 increments, made %d times; want 8, once", got, made)
	}
	if got := SessionValue(b.NewThread(&Cell{}), counterKey{}, newCounter).n; got != 0 {
		t.Errorf("session b sees a's value: n = %d", got)
	}
	bare := &starlark.Thread{}
	SessionValue(bare, counterKey{}, newCounter).n = 5
	if got := SessionValue(bare, counterKey{}, newCounter).n; got != 0 {
		t.Errorf("a bare thread kept a value: n = %d", got)
	}
}
