// Command ferretserver is a test-only MongoDB wire-protocol server:
// FerretDB v1.24.2 embedded as a library over SQLite in a directory.
//
// It lives in its own module so that FerretDB never becomes a dependency
// of the benchbook binary; package mongotest builds and starts it for
// tests. It listens on loopback, prints its URI as the first line of
// stdout, and exits when its stdin closes (its parent died or let go) or
// on SIGTERM/SIGINT.
//
// Usage: ferretserver -dir DIR [-addr 127.0.0.1:0]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	dir := flag.String("dir", "", "SQLite data directory (required)")
	addr := flag.String("addr", "127.0.0.1:0", "TCP listen address")
	stdinExit := flag.Bool("stdin-exit", false, "exit when stdin closes")
	flag.Parse()
	if err := run(*dir, *addr, *stdinExit); err != nil {
		fmt.Fprintln(os.Stderr, "ferretserver:", err)
		os.Exit(1)
	}
}

func run(dir, addr string, stdinExit bool) error {
	if dir == "" {
		return fmt.Errorf("-dir is required")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: addr},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + dir + "/",
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	if stdinExit {
		go func() {
			io.Copy(io.Discard, os.Stdin) // returns when the parent closes the pipe or dies
			cancel()
		}()
	}
	fmt.Println(f.MongoDBURI())
	return f.Run(ctx)
}
