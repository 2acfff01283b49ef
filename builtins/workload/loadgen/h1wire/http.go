package h1wire

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// HTTPSpec is an HTTP/1.1 target: the request every client sends, or a mix
// of requests (Requests) drawn by weight, or requests a generator makes.
type HTTPSpec struct {
	URL      string                          `json:"url"`               // http:// or https://host[:port]/path
	Method   string                          `json:"method"`            // GET when empty
	Headers  [][2]string                     `json:"headers,omitempty"` // name, value; a Host here replaces the URL's
	Body     []byte                          `json:"body,omitempty"`
	Insecure bool                            `json:"insecure,omitempty"` // skip TLS certificate checks (self-signed test servers)
	Gen      func(seq int64) (string, error) `json:"-"`                  // request seq's path (or same-host URL); nil: URL's
	Timeout  time.Duration                   `json:"-"`                  // bounds connecting (Spec.Timeout)

	// Requests is a mix: each request is one of these, drawn by weight
	// (Mix, seeded by Seed) and counted under its tag. URL, Method,
	// Headers and Body above are every request's defaults.
	Requests []HTTPRequest `json:"requests,omitempty"`
	Seed     uint64        `json:"seed,omitempty"`
	// Tagged generates whole requests, each with its tag (Request.Weight
	// unused); nil for none. Beside Gen, or Requests, it is an error.
	Tagged func(seq int64) (HTTPRequest, error) `json:"-"`
}

// HTTPRequest is one request of a mix, or one a generator made.
type HTTPRequest struct {
	Tag     string      `json:"tag,omitempty"`     // "": "METHOD path"
	Weight  float64     `json:"weight,omitempty"`  // a mix's: its share is weight over the sum
	Method  string      `json:"method,omitempty"`  // "": the spec's
	URL     string      `json:"url,omitempty"`     // a path joined to the spec's URL, or a URL on its host; "": the spec's
	Headers [][2]string `json:"headers,omitempty"` // beside the spec's; one of the same name replaces the spec's
	Body    []byte      `json:"body,omitempty"`    // nil: the spec's
	// Gen makes request seq's path instead of URL (a mix's request of
	// many shapes: an id per request); nil: URL.
	Gen func(seq int64) (string, error) `json:"-"`
}

// httpKind is one kind of request a target sends, built once: all of it
// (static) or all but its path.
type httpKind struct {
	tag     string
	method  string
	base    string // request URI, or the prefix of generated paths
	headers []byte // "Name: value\r\n" lines, the Host's first
	body    []byte
	noBody  bool   // HEAD: responses carry no body
	static  []byte // whole request, when gen is nil
	gen     func(seq int64) (string, error)
}

// NewHTTPTarget checks spec and builds its requests once (or, with a
// generator, all but their paths).
func NewHTTPTarget(spec HTTPSpec) (*HTTPTarget, error) {
	u, err := url.Parse(spec.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url: malformed URL %q (want http://host[:port]/path)", spec.URL)
	}
	t := &HTTPTarget{addr: hostPort(u), host: u.Host, timeout: spec.Timeout}
	if u.Scheme == "https" {
		// Insecure: a test server's self-signed certificate, as wrk and
		// vegeta -insecure accept.
		t.tls = &tls.Config{ServerName: u.Hostname(), InsecureSkipVerify: spec.Insecure}
	}
	for _, h := range spec.Headers {
		if strings.ContainsAny(h[0]+h[1], "\r\n") || h[0] == "" {
			return nil, fmt.Errorf("headers: want names and values without newlines, got %q: %q", h[0], h[1])
		}
	}
	switch {
	case spec.Tagged != nil && (spec.Gen != nil || len(spec.Requests) > 0):
		return nil, fmt.Errorf("a tagged generator makes every request: it cannot go with requests or a path generator")
	case spec.Gen != nil && len(spec.Requests) > 0:
		return nil, fmt.Errorf("give requests or a request generator, not both")
	case len(spec.Requests) > 0:
		err := t.mix(spec, u)
		t.generates = slices.ContainsFunc(t.kinds, func(k httpKind) bool { return k.gen != nil })
		return t, err
	}
	k, err := t.kind(spec, HTTPRequest{Gen: spec.Gen}, u)
	if err != nil {
		return nil, err
	}
	t.kinds, t.gen = []httpKind{k}, spec.Tagged
	t.defaults = spec
	t.generates = t.gen != nil || k.gen != nil
	return t, nil
}

// mix builds the kinds of spec.Requests and their draw.
func (t *HTTPTarget) mix(spec HTTPSpec, u *url.URL) error {
	weights := make([]float64, len(spec.Requests))
	for i, rq := range spec.Requests {
		k, err := t.kind(spec, rq, u)
		if err != nil {
			return fmt.Errorf("requests[%d]: %w", i, err)
		}
		t.kinds = append(t.kinds, k)
		weights[i] = rq.Weight
		if weights[i] == 0 {
			weights[i] = 1
		}
	}
	var err error
	t.draw, err = loadgen.NewMix(weights, spec.Seed)
	return err
}

// kind builds request rq with the spec's defaults.
func (t *HTTPTarget) kind(spec HTTPSpec, rq HTTPRequest, u *url.URL) (httpKind, error) {
	k := httpKind{method: strings.ToUpper(or(rq.Method, spec.Method, "GET")), body: spec.Body, gen: rq.Gen, base: u.RequestURI()}
	if rq.Body != nil {
		k.body = rq.Body
	}
	if strings.ContainsAny(k.method, " \r\n") {
		return k, fmt.Errorf("method: malformed %q", k.method)
	}
	if rq.URL != "" {
		uri, err := t.requestURI(k.base, rq.URL)
		if err != nil {
			return k, err
		}
		k.base = uri
	}
	k.noBody = k.method == "HEAD"
	var err error
	if k.headers, err = t.headerLines(spec.Headers, rq.Headers); err != nil {
		return k, err
	}
	k.tag = rq.Tag
	if k.tag == "" && len(spec.Requests) > 0 {
		k.tag = k.method + " " + k.base
	}
	if k.gen == nil {
		k.static = k.appendRequest(nil, k.base)
	}
	return k, nil
}

// headerLines are the request's header lines: the Host (unless a header
// names one), then the spec's and the request's sorted, a request's
// replacing a spec's of the same name.
func (t *HTTPTarget) headerLines(spec, own [][2]string) ([]byte, error) {
	byName := map[string]string{}
	for _, set := range [][][2]string{spec, own} {
		for _, h := range set {
			if strings.ContainsAny(h[0]+h[1], "\r\n") || h[0] == "" {
				return nil, fmt.Errorf("headers: want names and values without newlines, got %q: %q", h[0], h[1])
			}
			for name := range byName {
				if strings.EqualFold(name, h[0]) {
					delete(byName, name)
				}
			}
			byName[h[0]] = h[1]
		}
	}
	host := t.host
	var lines []string
	for name, v := range byName {
		if strings.EqualFold(name, "host") {
			host = "" // the user's Host header is among them
		}
		lines = append(lines, name+": "+v+"\r\n")
	}
	sort.Strings(lines)
	if host != "" {
		lines = append([]string{"Host: " + host + "\r\n"}, lines...)
	}
	return []byte(strings.Join(lines, "")), nil
}

// requestURI is the request URI of a request's url: a path joined to the
// spec's (base), or a URL on the spec's host.
func (t *HTTPTarget) requestURI(base, raw string) (string, error) {
	if strings.HasPrefix(raw, "http://") || strings.HasPrefix(raw, "https://") {
		uri, ok := sameHostURI(raw, t)
		if !ok {
			return "", fmt.Errorf("url %q is not on %s: one run sends to one host", raw, t.addr)
		}
		return uri, nil
	}
	if strings.ContainsAny(raw, " \r\n") {
		return "", fmt.Errorf("url: malformed path %q", raw)
	}
	return joinPath(base, raw), nil
}

// joinPath joins a generated or given path to the URL's: url
// "http://h/api" + "/items" is "/api/items", "http://h/" + "/search" is
// "/search".
func joinPath(base, p string) string {
	if len(p) > 0 && p[0] == '/' && base[len(base)-1] == '/' {
		return base[:len(base)-1] + p
	}
	return base + p
}

func or(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// GenErr is the first error of the request generator, "" if none.
func (t *HTTPTarget) GenErr() string {
	s, _ := t.genErr.Load().(string)
	return s
}

// Shares are each tag's share of the mix's weights; nil without a mix.
func (t *HTTPTarget) Shares() map[string]float64 {
	return loadgen.MixShares(t.kindTags(), t.draw)
}

// kindTags are the tags of the mix's requests, one per kind.
func (t *HTTPTarget) kindTags() []string {
	tags := make([]string, len(t.kinds))
	for i, k := range t.kinds {
		tags[i] = k.tag
	}
	return tags
}

// Tags are the mix's tags, in order, each once; nil for an untagged
// target (a tagged generator's come as it names them).
func (t *HTTPTarget) Tags() []string {
	switch {
	case t.draw != nil:
		return loadgen.UniqueTags(t.kindTags())
	case t.gen != nil:
		return []string{}
	}
	return nil
}

// TagOf is the tag request seq of an open loop has, or would have had.
func (t *HTTPTarget) TagOf(seq int64) string {
	if t.draw != nil {
		return t.kinds[t.draw.Pick(0, seq)].tag
	}
	if t.gen != nil {
		if rq, err := t.gen(seq); err == nil {
			return rq.Tag
		}
	}
	return loadgen.Untagged
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
