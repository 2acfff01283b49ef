package loadgen

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen/netpoll"
)

// TestRawConn sends more than the socket buffers hold each way at once (so
// writes wait for the poller mid-way and a read overlaps a write on the same
// conn), then checks the deadline, EOF and closed-connection classes.
func TestRawConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c) // echo until the client half-closes... or closes
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := netpoll.NewRawConn(nc)
	if _, ok := c.(*netpoll.RawConn); !ok {
		t.Fatalf("a TCP conn was not wrapped: %T", c)
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	var wg sync.WaitGroup
	var werr error
	wg.Go(func() {
		n, err := c.Write(want)
		if err == nil && n != len(want) {
			err = io.ErrShortWrite
		}
		werr = err
	})
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if werr != nil || !bytes.Equal(got, want) {
		t.Fatalf("echo of %d bytes: write error %v, equal %v", len(want), werr, bytes.Equal(got, want))
	}

	_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := c.Read(got); Classify(err) != "timeout" {
		t.Errorf("read past the deadline: %v classified %q, want timeout", err, Classify(err))
	}
	_ = c.SetReadDeadline(time.Time{})
	nc.(*net.TCPConn).CloseWrite()
	if _, err := c.Read(got); err != io.EOF {
		t.Errorf("read after the peer closed: %v, want EOF", err)
	}
	c.Close()
	if _, err := c.Read(got); Classify(err) != "interrupted" {
		t.Errorf("read on a closed conn: %v classified %q, want interrupted", err, Classify(err))
	}
	if _, err := c.Write([]byte("x")); Classify(err) != "interrupted" {
		t.Errorf("write on a closed conn: %v classified %q, want interrupted", err, Classify(err))
	}
}

// TestRawConnConcurrentReads: two goroutines reading one connection (as
// pgconn's asyncClose does while its background reader runs) each get whole
// bytes of the stream, none lost or duplicated.
func TestRawConnConcurrentReads(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const total = 1 << 20
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, total)
		for i := range buf {
			buf[i] = 1
		}
		c.Write(buf)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	rc := netpoll.NewRawConn(c)
	defer rc.Close()
	var wg sync.WaitGroup
	sums := make([]int, 2)
	for i := range sums {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 4096)
			for {
				n, err := rc.Read(buf)
				for _, b := range buf[:n] {
					sums[i] += int(b)
				}
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := sums[0] + sums[1]; got != total {
		t.Errorf("read %d bytes in all, want %d", got, total)
	}
}
