package httpget

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fatalRecorder is a test whose Fatal and Fatalf record the message and
// stop the goroutine, as testing.T's do.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	f.TB.SkipNow() // a Goexit the outer test does not count as a failure
}
func (f *fatalRecorder) Fatalf(format string, args ...any) { f.Fatal(fmt.Sprintf(format, args...)) }

// run calls OK with a recorder in a subtest, whose goroutine a Fatal
// ends; the body and the failure message come back.
func run(t *testing.T, url string) (body, msg string) {
	t.Run("get", func(t *testing.T) {
		r := &fatalRecorder{TB: t}
		defer func() { msg = r.msg }()
		body = OK(r, url)
	})
	return body, msg
}

// TestOKAndBody against a loopback server: a 200's body from both; a 404
// fails OK and is read by Body; a refused connection fails OK and is an
// "error: " for Body.
func TestOKAndBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/here" {
			http.Error(w, "none", http.StatusNotFound)
			return
		}
		fmt.Fprint(w, "page")
	}))
	defer srv.Close()
	if body, msg := run(t, srv.URL+"/here"); body != "page" || msg != "" {
		t.Errorf("OK(/here) = %q, failure %q", body, msg)
	}
	if got := Body(srv.URL + "/here"); got != "page" {
		t.Errorf("Body(/here) = %q", got)
	}
	if _, msg := run(t, srv.URL+"/gone"); !strings.Contains(msg, "404") {
		t.Errorf("OK(/gone) failed with %q, want the 404", msg)
	}
	if got := Body(srv.URL + "/gone"); got != "none\n" {
		t.Errorf("Body(/gone) = %q", got)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	if _, msg := run(t, closed); !strings.Contains(msg, "refused") {
		t.Errorf("OK of a closed port failed with %q", msg)
	}
	if got := Body(closed); !strings.HasPrefix(got, "error: ") {
		t.Errorf("Body of a closed port = %q", got)
	}
}
