// Command hotserver is the profiler's test target: an HTTP server whose
// every request runs two known hot functions, hotA and hotB, in amounts the
// arm decides. Arm A spends Heavy rounds in hotA and Light in hotB; arm B
// swaps them, so a differential profile of B against A must show hotA
// falling and hotB rising by the same work, and nothing else moving much.
//
//	hotserver -arm A -addr 127.0.0.1:0
//	hotserver -spin 500ms    # burn CPU in hotA, then exit
//	hotserver -work 100000   # on a line from stdin, fixed work; print its CPU µs
//
// prints "listening ADDR" on stdout once it serves, and serves
// /debug/pprof/ too, so both samplers can read it.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Rounds of work per request. Heavy/Light = 5, so the swap dwarfs the
// sampling noise of a short run; a round of hotB costs about twice one of
// hotA here (18 against 9 ns in CI's profiles), so in arm A hotA takes
// about 2.5 times hotB's CPU and in arm B hotB about 10 times hotA's.
const (
	Heavy = 5000
	Light = 1000
)

var sink uint64

// hotA hashes (FNV-1a over a counter): integer work.
//
//go:noinline
func hotA(rounds int) uint64 {
	h := uint64(14695981039346656037)
	for i := range rounds {
		for b := range 8 {
			h ^= uint64(byte(i >> (8 * b)))
			h *= 1099511628211
		}
	}
	return h
}

// hotB sums square roots: floating-point work, a different function so
// the two never share a frame.
//
//go:noinline
func hotB(rounds int) uint64 {
	s := 0.0
	for i := range rounds {
		s += math.Sqrt(float64(i) + s*1e-9)
	}
	return uint64(s)
}

func main() {
	arm := flag.String("arm", os.Getenv("HOTSERVER_ARM"), "A (hotA heavy) or B (hotB heavy); $HOTSERVER_ARM")
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	spin := flag.Duration("spin", 0, "instead of serving, run hotA for this long and exit")
	work := flag.Int("work", 0, "instead of serving, wait for a line on stdin, run hotA(Light) this many times, print the CPU µs it took, exit")
	flag.Parse()
	if *work > 0 {
		bufio.NewReader(os.Stdin).ReadString('\n')
		var r0, r1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
		for range *work {
			sink += hotA(Light)
		}
		syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
		ns := r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano()
		fmt.Println(ns / 1000)
		return
	}
	if *spin > 0 {
		for end := time.Now().Add(*spin); time.Now().Before(end); {
			sink += hotA(Light)
		}
		return
	}
	a, b := Heavy, Light
	switch *arm {
	case "A", "":
	case "B":
		a, b = Light, Heavy
	default:
		log.Fatalf("hotserver: -arm must be A or B, got %q", *arm)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		v := hotA(a) ^ hotB(b)
		sink += v
		w.Write([]byte(strconv.FormatUint(v, 16)))
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening %s\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
