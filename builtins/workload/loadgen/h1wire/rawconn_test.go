package h1wire

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/netpoll"
)

// TestHTTPSOverRawConn: TLS runs on top of the raw socket reads and writes.
func TestHTTPSOverRawConn(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello\n") }))
	defer srv.Close()
	tgt, err := NewHTTPTarget(HTTPSpec{URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	tgt.tls = &tls.Config{ServerName: tgt.tls.ServerName, RootCAs: roots}
	c := tgt.NewClient()
	defer c.Close()
	for i := range 20 {
		if class, _ := c.Do(context.Background(), loadgen.Request{Seq: int64(i), Deadline: time.Now().Add(5 * time.Second)}); class != "" {
			t.Fatalf("request %d: %s", i, class)
		}
	}
	if _, ok := c.(*httpClient).conn.(*tls.Conn).NetConn().(*netpoll.RawConn); !ok {
		t.Errorf("the TLS connection does not run over a netpoll.RawConn")
	}
}
