package loadgen

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"time"
)

// HTTPSpec is an HTTP/1.1 target: the request every client sends.
type HTTPSpec struct {
	URL      string                          `json:"url"`               // http:// or https://host[:port]/path
	Method   string                          `json:"method"`            // GET when empty
	Headers  [][2]string                     `json:"headers,omitempty"` // name, value; a Host here replaces the URL's
	Body     []byte                          `json:"body,omitempty"`
	Insecure bool                            `json:"insecure,omitempty"` // skip TLS certificate checks (self-signed test servers)
	Gen      func(seq int64) (string, error) `json:"-"`                  // request seq's path (or same-host URL); nil: URL's
	Timeout  time.Duration                   `json:"-"`                  // bounds connecting (Spec.Timeout)
}

// NewHTTPTarget checks spec and builds its request once (or, with a
// generator, all but its path).
func NewHTTPTarget(spec HTTPSpec) (*HTTPTarget, error) {
	u, err := url.Parse(spec.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url: malformed URL %q (want http://host[:port]/path)", spec.URL)
	}
	t := &HTTPTarget{addr: hostPort(u), host: u.Host, method: strings.ToUpper(spec.Method), base: u.RequestURI(),
		body: spec.Body, gen: spec.Gen, timeout: spec.Timeout}
	if t.method == "" {
		t.method = "GET"
	}
	if u.Scheme == "https" {
		// Insecure: a test server's self-signed certificate, as wrk and
		// vegeta -insecure accept.
		t.tls = &tls.Config{ServerName: u.Hostname(), InsecureSkipVerify: spec.Insecure}
	}
	t.noBody = t.method == "HEAD"
	var lines []string
	for _, h := range spec.Headers {
		if strings.ContainsAny(h[0]+h[1], "\r\n") || h[0] == "" {
			return nil, fmt.Errorf("headers: want names and values without newlines, got %q: %q", h[0], h[1])
		}
		if strings.EqualFold(h[0], "host") {
			t.host = "" // the user's Host header is in headers
		}
		lines = append(lines, h[0]+": "+h[1]+"\r\n")
	}
	sort.Strings(lines)
	t.headers = []byte(strings.Join(lines, ""))
	if t.gen == nil {
		t.static = t.appendRequest(nil, t.base)
	}
	return t, nil
}

// GenErr is the first error of the request generator, "" if none.
func (t *HTTPTarget) GenErr() string {
	s, _ := t.genErr.Load().(string)
	return s
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// sameHostURI returns the request URI of a full URL made by a generator,
// if it points at the run's own host.
func sameHostURI(raw string, t *HTTPTarget) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || hostPort(u) != t.addr {
		return "", false
	}
	return u.RequestURI(), true
}
