//go:build !linux

package loadgen

import (
	"errors"
	"time"
)

// waker needs a timerfd: elsewhere open-loop workers sleep on Go timers.
type waker struct{}

func newWaker() (*waker, error)        { return nil, errors.New("no timerfd") }
func (w *waker) wait(t time.Time) bool { return false }
func (w *waker) close()                {}
