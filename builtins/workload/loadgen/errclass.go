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
// one of these, through classify, so the same fault reads the same
// whichever loop met it. A test table holds every loop to it.
const (
	classTimeout     = "timeout"            // no answer by the deadline (or statement_timeout)
	classRefused     = "refused"            // nothing listening (or a unix socket gone)
	classReset       = "reset"              // the peer reset the connection
	classClosed      = "closed"             // the peer closed it before the answer was whole
	classMalformed   = "malformed response" // an answer that breaks the protocol's framing
	classTLS         = "tls"                // the TLS handshake failed
	classDNS         = "dns"                // the host name did not resolve
	classInterrupted = "interrupted"        // Ctrl-C (never recorded: the run keeps what it measured)
	classGenerator   = "generator error"    // the request generator failed
	classOffHost     = "generator url on another host"
	classFewArgs     = "too few args" // sql: fewer args than the statement's $n
	classOther       = "other"
	// Plus "status NNN" (an HTTP status >= 400, statusClass) and
	// "sqlstate XXXXX" (a server error, but 57014: a timeout).
)

// classify names the error a request ended with.
func classify(err error) string {
	var pgErr *pgconn.PgError
	var ne net.Error
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "57014": // statement_timeout
		return classTimeout
	case errors.As(err, &pgErr):
		return "sqlstate " + pgErr.Code
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout(), pgconn.Timeout(err):
		return classTimeout
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT):
		return classRefused // ENOENT: a unix socket whose server is gone
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return classReset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return classClosed
	case errors.Is(err, net.ErrClosed), errors.Is(err, context.Canceled):
		return classInterrupted
	case errors.Is(err, errMalformed), errors.Is(err, errUnsupported):
		return classMalformed
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return classDNS
	}
	var tlsErr tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	var alert tls.AlertError
	if errors.As(err, &tlsErr) || errors.As(err, &certErr) || errors.As(err, &alert) {
		return classTLS // a handshake that failed: a certificate not trusted (insecure = True), a protocol mismatch
	}
	return classOther
}

var statusClasses sync.Map // int -> string, so error paths do not allocate

// statusClass is the class of an HTTP response with status code >= 400.
func statusClass(code int) string {
	if s, ok := statusClasses.Load(code); ok {
		return s.(string)
	}
	s := "status " + strconv.Itoa(code)
	statusClasses.Store(code, s)
	return s
}
