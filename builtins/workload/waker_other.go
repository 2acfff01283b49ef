//go:build !linux

package workload

// sharpen has no timerfd to work with here: the open loop's workers wake
// with Go's timers alone.
func (r *run) sharpen() {}
