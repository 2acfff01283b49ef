// Package httpget reads a page in a test: the body of a GET, from the
// test's goroutine (which a failure stops) or from any other.
package httpget

import (
	"io"
	"net/http"
	"testing"
)

// OK is the body url answers a GET with; the test fails at once unless
// it is a 200 read whole. Call it from the test's goroutine.
func OK(t testing.TB, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	return string(body)
}

// Body is the body url answers a GET with, whatever its status, or
// "error: ..." when there is none: for goroutines other than the test's,
// which must not stop it.
func Body(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}
