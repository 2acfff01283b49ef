package pgwire

import (
	"encoding/binary"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// pgReader splits a PostgreSQL backend's byte stream into the messages the
// SQL loop acts on, as bytes arrive: ErrorResponse ('E') and ReadyForQuery
// ('Z'). Every other message (rows, command tags, notices) is counted and
// dropped without being kept, so memory stays bounded whatever the server
// sends: a 4 GB DataRow costs no more than a small one, and a length field
// that lies costs nothing. A fuzz test holds its framing to pgproto3's.
type pgReader struct {
	hdr  [5]byte // the message type and length, as they arrive
	nhdr int
	skip int64  // body bytes of an ignored message still to drop
	typ  byte   // the kept message being collected
	body []byte // its body so far
	want int    // its body's length
}

// maxKeptBody bounds an ErrorResponse (and ReadyForQuery) body: a server's
// error message is a few hundred bytes.
const maxKeptBody = 1 << 20

// next consumes the start of b and returns the next kept message once it is
// whole (ok), and how much of b it used. The body is valid until the next
// call. A length below 4 (the length counts itself) is malformed.
func (r *pgReader) next(b []byte) (typ byte, body []byte, used int, ok bool, err error) {
	for used < len(b) {
		switch {
		case r.skip > 0:
			n := int(min(r.skip, int64(len(b)-used)))
			r.skip -= int64(n)
			used += n
		case r.typ != 0:
			n := min(r.want-len(r.body), len(b)-used)
			r.body = append(r.body, b[used:used+n]...)
			used += n
			if len(r.body) == r.want {
				typ, r.typ = r.typ, 0
				return typ, r.body, used, true, nil
			}
		case r.nhdr == 0 && len(b)-used >= 5:
			// The common case: a whole header, often a whole message, in b.
			typ, size := b[used], int64(binary.BigEndian.Uint32(b[used+1:]))-4
			if size < 0 {
				return 0, nil, used, false, loadgen.ErrMalformed
			}
			used += 5
			if !kept(typ) {
				r.skip = size
				continue
			}
			if size > maxKeptBody {
				return 0, nil, used, false, loadgen.ErrMalformed
			}
			if int64(len(b)-used) >= size {
				body, used = b[used:used+int(size)], used+int(size)
				return typ, body, used, true, nil
			}
			r.typ, r.want, r.body = typ, int(size), r.body[:0]
		default:
			n := copy(r.hdr[r.nhdr:], b[used:])
			r.nhdr += n
			used += n
			if r.nhdr < 5 {
				continue
			}
			r.nhdr = 0
			typ, size := r.hdr[0], int64(binary.BigEndian.Uint32(r.hdr[1:]))-4
			switch {
			case size < 0, kept(typ) && size > maxKeptBody:
				return 0, nil, used, false, loadgen.ErrMalformed
			case !kept(typ):
				r.skip = size
			case size == 0:
				return typ, nil, used, true, nil
			default:
				r.typ, r.want, r.body = typ, int(size), r.body[:0]
			}
		}
	}
	return 0, nil, used, false, nil
}

// kept says whether the SQL loop acts on messages of type typ.
func kept(typ byte) bool { return typ == 'E' || typ == 'Z' }

// reset forgets a message in progress: the connection it came from is gone.
func (r *pgReader) reset() { *r = pgReader{body: r.body[:0]} }
