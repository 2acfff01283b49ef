package pgwire

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen/loadgentest"
	"github.com/benchbook/benchbook/runtime/testsupport/pgtest"
	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// TestSQLGeneratorTimeIsNotLatency: a closed loop of workers over pgx (a
// TLS server: its sockets carry ciphertext, so no event loop reads them and
// each client is a goroutine's sqlClient) whose generator sleeps a known
// time per request, against a real PostgreSQL that answers SELECT in well
// under it: the sleep is the generator's, not the server's
// (loadgentest.RunSlowGenerator says what must hold).
func TestSQLGeneratorTimeIsNotLatency(t *testing.T) {
	timing.Only(t, "latency against a generator's known sleep")
	dsn := pgtest.Start(t, pgtest.Options{TLS: true}).DSN
	args := func(seq int64) ([]any, string, error) {
		time.Sleep(loadgentest.SlowGenerator)
		if seq%4 == 3 {
			return nil, "bad", errors.New("no such row")
		}
		return []any{seq}, "good", nil
	}
	tgt, err := OpenSQL(context.Background(), SQLSpec{DSN: dsn, Conns: 2, Timeout: 5 * time.Second,
		Statements: []Statement{{SQL: "SELECT $1::bigint"}}, TaggedArgs: args})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	if tgt.raw {
		t.Fatal("a TLS connection read raw: the run would not go through sqlClient")
	}
	loadgentest.RunSlowGenerator(t, tgt, "bad")
}
