package pgtest

import (
	"context"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStartTLSStop: the TLS cluster serves ssl = on over loopback, and
// Stop ends the postmaster (signal 0 then fails).
func TestStartTLSStop(t *testing.T) {
	c := Start(t, Options{TLS: true})
	conn, err := pgx.Connect(context.Background(), c.URL)
	if err != nil {
		t.Fatal(err)
	}
	var ssl string
	err = conn.QueryRow(context.Background(), "SHOW ssl").Scan(&ssl)
	conn.Close(context.Background())
	if err != nil || ssl != "on" {
		t.Fatalf("SHOW ssl = %q, %v", ssl, err)
	}
	c.Stop()
	if err := c.Proc.Process.Signal(syscall.Signal(0)); err == nil {
		t.Fatal("the postmaster still runs after Stop")
	}
}
