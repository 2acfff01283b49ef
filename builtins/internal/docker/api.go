package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// The Engine API over HTTP: the few calls benchbook makes, with the
// engine's own types (github.com/moby/moby/api). The engine's client
// module (github.com/moby/moby/client, and github.com/docker/docker before
// it) makes the same calls through OpenTelemetry's instrumented transport,
// which it links whatever its caller wants: 2 MB of benchbook's binary.

// MaxAPIVersion is the newest API this client speaks, that of the types
// of github.com/moby/moby/api it uses: negotiation takes the engine's when
// it is older (1.41 for Debian's docker.io 20.10). minAPIVersion is the
// oldest whose calls and fields it uses (Engine 19.03 speaks 1.40).
const (
	MaxAPIVersion = "1.57"
	minAPIVersion = "1.40"
)

// defaultHost is where the engine listens unless DOCKER_HOST says.
const defaultHost = "unix:///var/run/docker.sock"

// apiClient speaks to one engine at one negotiated API version.
type apiClient struct {
	hc      *http.Client
	base    string // "http://engine" over a unix socket, "http://host:port" over TCP
	host    string // DOCKER_HOST, or the default socket
	version string // the API version, after negotiate
}

// newAPIClient reads DOCKER_HOST: a unix socket, or a plain TCP address
// (an engine asking for TLS is refused: DOCKER_TLS_VERIFY).
func newAPIClient() (*apiClient, error) {
	host := os.Getenv("DOCKER_HOST")
	if host == "" {
		host = defaultHost
	}
	c := &apiClient{host: host}
	switch {
	case strings.HasPrefix(host, "unix://"):
		sock := strings.TrimPrefix(host, "unix://")
		c.base = "http://engine"
		c.hc = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}
	case strings.HasPrefix(host, "tcp://"):
		if os.Getenv("DOCKER_TLS_VERIFY") != "" {
			return nil, fmt.Errorf("DOCKER_HOST %s with DOCKER_TLS_VERIFY: benchbook speaks to an engine over a unix socket or plain TCP only", host)
		}
		c.base = "http://" + strings.TrimPrefix(host, "tcp://")
		c.hc = &http.Client{Transport: &http.Transport{}}
	default:
		return nil, fmt.Errorf("DOCKER_HOST %q: want unix:///path or tcp://host:port", host)
	}
	return c, nil
}

// negotiate takes the engine's API version (its /_ping says) when it is
// older than MaxAPIVersion.
func (c *apiClient) negotiate(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/_ping", nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	v := resp.Header.Get("Api-Version")
	if v == "" {
		return fmt.Errorf("the engine at %s gave no API version", c.host)
	}
	if olderAPI(v, minAPIVersion) {
		return fmt.Errorf("the engine at %s speaks API %s, older than %s", c.host, v, minAPIVersion)
	}
	c.version = MaxAPIVersion
	if olderAPI(v, MaxAPIVersion) {
		c.version = v
	}
	return nil
}

// olderAPI says whether API version a ("1.41") is older than b.
func olderAPI(a, b string) bool {
	am, an, _ := strings.Cut(a, ".")
	bm, bn, _ := strings.Cut(b, ".")
	x, _ := strconv.Atoi(am)
	y, _ := strconv.Atoi(bm)
	if x != y {
		return x < y
	}
	x, _ = strconv.Atoi(an)
	y, _ = strconv.Atoi(bn)
	return x < y
}

// apiError is the engine's refusal: its status and message.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return "Error response from daemon: " + e.msg }

// isNotFound says whether the engine answered 404 (no such container or
// image).
func isNotFound(err error) bool {
	var e *apiError
	return errors.As(err, &e) && e.status == http.StatusNotFound
}

// call sends a request at the negotiated version; body is JSON-encoded
// unless it is an io.Reader. A status of 400 or more is an apiError. The
// caller closes the response's body.
func (c *apiClient) call(ctx context.Context, method, path string, query url.Values, body any) (*http.Response, error) {
	var r io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case io.Reader:
		r, ctype = b, "application/x-tar"
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		r, ctype = bytes.NewReader(data), "application/json"
	}
	u := c.base + "/v" + c.version + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return nil, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var m struct{ Message string }
		if json.Unmarshal(data, &m) != nil || m.Message == "" {
			m.Message = strings.TrimSpace(string(data))
		}
		return nil, &apiError{status: resp.StatusCode, msg: m.Message}
	}
	return resp, nil
}

// get decodes the answer of a GET into out.
func (c *apiClient) get(ctx context.Context, path string, query url.Values, out any) error {
	return c.decode(ctx, http.MethodGet, path, query, nil, out)
}

// decode sends a request and decodes its JSON answer into out (nil: the
// answer is dropped).
func (c *apiClient) decode(ctx context.Context, method, path string, query url.Values, body, out any) error {
	resp, err := c.call(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func (c *apiClient) close() { c.hc.CloseIdleConnections() }
