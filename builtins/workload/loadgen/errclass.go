package loadgen

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// The error classes of a run's errors dict. Every loop (open and closed,
// HTTP and SQL, epoll or goroutine per client) names a failed request with
// one of these, through Classify, so the same fault reads the same
// whichever loop met it. A test table holds every loop to it.
const (
	ClassTimeout     = "timeout"            // no answer by the deadline (or statement_timeout)
	ClassRefused     = "refused"            // nothing listening (or a unix socket gone)
	ClassReset       = "reset"              // the peer reset the connection
	ClassClosed      = "closed"             // the peer closed it before the answer was whole
	ClassMalformed   = "malformed response" // an answer that breaks the protocol's framing
	ClassTLS         = "tls"                // the TLS handshake failed
	ClassDNS         = "dns"                // the host name did not resolve
	ClassInterrupted = "interrupted"        // Ctrl-C (never recorded: the run keeps what it measured)
	ClassGenerator   = "generator error"    // the request generator failed
	ClassOffHost     = "generator url on another host"
	ClassFewArgs     = "too few args" // sql: fewer args than the statement's $n
	ClassOther       = "other"
	// Plus "status NNN" (an HTTP status >= 400, StatusClass) and
	// "sqlstate XXXXX" (a server error, but 57014: a timeout).
)

// Classify names the error a request ended with.
func Classify(err error) string {
	var pgErr *pgconn.PgError
	var ne net.Error
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "57014": // statement_timeout
		return ClassTimeout
	case errors.As(err, &pgErr):
		return "sqlstate " + pgErr.Code
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout(), pgconn.Timeout(err):
		return ClassTimeout
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT):
		return ClassRefused // ENOENT: a unix socket whose server is gone
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return ClassReset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ClassClosed
	case errors.Is(err, net.ErrClosed), errors.Is(err, context.Canceled):
		return ClassInterrupted
	case errors.Is(err, ErrMalformed):
		return ClassMalformed
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return ClassDNS
	}
	var tlsErr tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	var alert tls.AlertError
	if errors.As(err, &tlsErr) || errors.As(err, &certErr) || errors.As(err, &alert) {
		return ClassTLS // a handshake that failed: a certificate not trusted (insecure = True), a protocol mismatch
	}
	return ClassOther
}

// ErrMalformed is a response that breaks its protocol's framing rules (a
// wire protocol's parser returns it, or an error wrapping it); Classify
// names it ClassMalformed.
var ErrMalformed = errors.New("malformed response")

var statusClasses sync.Map // int -> string, so error paths do not allocate

// StatusClass is the class of an HTTP response with status code >= 400.
func StatusClass(code int) string {
	if s, ok := statusClasses.Load(code); ok {
		return s.(string)
	}
	s := "status " + strconv.Itoa(code)
	statusClasses.Store(code, s)
	return s
}
