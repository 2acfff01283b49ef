package loadgen

import (
	"syscall"
	"testing"
	"time"
)

// TestArrivalsWithoutStamps: a read that comes without a receive time does
// not end the loop's hope of them before any came (the kernel turns them on
// a moment after the first socket asks), but ends it once they had come: a
// response read late must never be timed at the read. A unix socket, which
// has no receive times, stands in for both.
func TestArrivalsWithoutStamps(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	a := &arrivals{open: true}
	b := make([]byte, 64)
	for i, stampedBefore := range []bool{false, true} {
		a.stamps = stampedBefore
		if _, err := syscall.Write(fds[1], []byte("response")); err != nil {
			t.Fatal(err)
		}
		before := time.Now()
		n, at, err := a.Read(fds[0], b)
		if n != 8 || err != nil || at.Before(before) {
			t.Fatalf("read %d: %d bytes, err %v, timed %s (before the read)", i, n, err, at)
		}
		if a.noStamps != stampedBefore {
			t.Errorf("read %d without a receive time, stamps seen before %v: noStamps %v", i, stampedBefore, a.noStamps)
		}
		if a.Stamped() {
			t.Errorf("read %d: Stamped() with no receive time ever read", i)
		}
	}
}
