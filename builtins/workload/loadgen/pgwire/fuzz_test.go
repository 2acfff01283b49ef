package pgwire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// pgMsg is one message the SQL loop acts on: its type and, for an error, the
// SQLSTATE (or "?" when the body does not decode).
type pgMsg struct {
	typ  byte
	code string
}

// ourPGMessages splits data with pgReader, fed in pieces of size cut (0:
// whole); it stops at the first error.
func ourPGMessages(data []byte, cut int) ([]pgMsg, error) {
	var r pgReader
	var out []pgMsg
	if cut <= 0 {
		cut = len(data)
	}
	for len(data) > 0 {
		piece := data[:min(cut, len(data))]
		data = data[len(piece):]
		for off := 0; off < len(piece); {
			typ, body, used, ok, err := r.next(piece[off:])
			off += used
			if err != nil {
				return out, err
			}
			if ok {
				out = append(out, decodePGMsg(typ, body))
			}
		}
	}
	return out, nil
}

func decodePGMsg(typ byte, body []byte) pgMsg {
	m := pgMsg{typ: typ}
	if typ == 'E' {
		var e pgproto3.ErrorResponse
		if err := e.Decode(body); err != nil {
			m.code = "?"
		} else {
			m.code = e.Code
		}
	}
	return m
}

// pgprotoMessages reads data with pgproto3's Frontend (as pgx does) and
// keeps the messages the SQL loop acts on, up to pgproto3's first error;
// complete says the data merely ran out (pgproto3 says "unexpected EOF" at
// the end of the bytes, cut mid-message or not): no framing error.
func pgprotoMessages(data []byte) (msgs []pgMsg, complete bool) {
	fe := pgproto3.NewFrontend(bytes.NewReader(data), io.Discard)
	fe.SetMaxBodyLen(maxKeptBody) // else a lying length makes it allocate 4 GB
	for {
		msg, err := fe.Receive()
		if err != nil {
			return msgs, errors.Is(err, io.ErrUnexpectedEOF)
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			msgs = append(msgs, pgMsg{typ: 'E', code: m.Code})
		case *pgproto3.ReadyForQuery:
			msgs = append(msgs, pgMsg{typ: 'Z'})
		}
	}
}

// FuzzPGReader holds the SQL loop's message framing to pgproto3's: every
// ErrorResponse and ReadyForQuery pgproto3 reads, pgReader reads in the same
// order with the same SQLSTATE, however the bytes are cut; past pgproto3's
// first error (a message type or body it refuses) pgReader may read on, as
// it skips what the loop does not act on; it never panics.
func FuzzPGReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		want, complete := pgprotoMessages(data)
		got, err := ourPGMessages(data, 0)
		if complete && err != nil {
			t.Fatalf("pgproto3 found no framing error, pgReader: %v\n%q", err, data)
		}
		if len(got) < len(want) || complete && len(got) != len(want) {
			t.Fatalf("pgproto3 %v, pgReader %v (err %v)\n%q", want, got, err, data)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("message %d: pgproto3 %v, pgReader %v\n%q", i, want[i], got[i], data)
			}
		}
		again, err2 := ourPGMessages(data, int(cut)+1)
		if len(again) != len(got) || (err2 == nil) != (err == nil) {
			t.Fatalf("whole: %v %v; in pieces of %d: %v %v\n%q", got, err, int(cut)+1, again, err2, data)
		}
		for i := range got {
			if again[i] != got[i] {
				t.Fatalf("in pieces of %d, message %d: %v, whole %v", int(cut)+1, i, again[i], got[i])
			}
		}
	})
}
