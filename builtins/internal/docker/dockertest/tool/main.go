// Command tool is the one program of the test image (FROM scratch, static):
//
//	tool spin [N]        N goroutines in busy loops (1)
//	tool alloc MB [S]    after S seconds (0), touch MB MiB of memory, then sleep
//	tool listen PORT     accept TCP connections on 127.0.0.1:PORT
//	tool exit CODE [S]   exit after S seconds (0)
//	tool printenv NAME [CODE]  print $NAME, then exit with CODE (without
//	                     CODE: say "ready" and sleep)
//	tool                 serve HTTP ("ok") on 127.0.0.1:$PORT; with $ALLOC_MB,
//	                     touch that many MiB $ALLOC_AFTER seconds after start;
//	                     with $EXIT_CODE, exit with it $EXIT_AFTER seconds
//	                     after start
//
// Every mode prints "ready" once it is doing what it says.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		if mb, _ := strconv.Atoi(os.Getenv("ALLOC_MB")); mb > 0 {
			after, _ := strconv.ParseFloat(os.Getenv("ALLOC_AFTER"), 64)
			go func() {
				time.Sleep(time.Duration(after * float64(time.Second)))
				touch(mb)
			}()
		}
		if code, err := strconv.Atoi(os.Getenv("EXIT_CODE")); err == nil {
			after, _ := strconv.ParseFloat(os.Getenv("EXIT_AFTER"), 64)
			time.AfterFunc(time.Duration(after*float64(time.Second)), func() { os.Exit(code) })
		}
		fmt.Println("ready")
		err := http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte("ok\n"))
		}))
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	n := 1
	if len(os.Args) > 2 && os.Args[1] != "printenv" {
		n, _ = strconv.Atoi(os.Args[2])
	}
	switch os.Args[1] {
	case "spin":
		for range n {
			go spin()
		}
		fmt.Println("ready")
		select {}
	case "alloc":
		if len(os.Args) > 3 {
			s, _ := strconv.ParseFloat(os.Args[3], 64)
			fmt.Println("waiting")
			time.Sleep(time.Duration(s * float64(time.Second)))
		}
		touch(n)
		fmt.Println("ready")
		time.Sleep(time.Hour)
	case "listen":
		ln, err := net.Listen("tcp", "127.0.0.1:"+os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("ready")
		for {
			c, err := ln.Accept()
			if err == nil {
				c.Close()
			}
		}
	case "printenv":
		fmt.Println(os.Getenv(os.Args[2]))
		if len(os.Args) > 3 {
			code, _ := strconv.Atoi(os.Args[3])
			os.Exit(code)
		}
		fmt.Println("ready")
		time.Sleep(time.Hour)
	case "exit":
		if len(os.Args) > 3 {
			s, _ := strconv.ParseFloat(os.Args[3], 64)
			fmt.Println("ready")
			time.Sleep(time.Duration(s * float64(time.Second)))
		}
		os.Exit(n)
	}
}

// touch allocates mb MiB and writes every page, so the kernel charges them.
func touch(mb int) {
	buf := make([]byte, mb<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	keep = buf
}

var keep []byte

func spin() {
	for i := 0; ; i++ {
		_ = i * i
	}
}
