package docker_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/moby/moby/client"
	"github.com/moby/moby/client/pkg/versions"

	"github.com/benchbook/benchbook/builtins/internal/docker/dockertest"
)

// TestConnectSpeaksTheEnginesAPIVersion: the client negotiates down to the
// engine's API version (1.41 for Debian's docker.io 20.10), the version the
// engine itself reports on its socket to a plain net/http request.
func TestConnectSpeaksTheEnginesAPIVersion(t *testing.T) {
	e := dockertest.Engine(t)
	sock, ok := strings.CutPrefix(e.Host, "unix://")
	if !ok {
		t.Skipf("the engine is not on a unix socket: %s", e.Host)
	}
	hc := http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	resp, err := hc.Get("http://engine/version")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct{ ApiVersion, MinAPIVersion string }
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	want := v.ApiVersion
	if versions.LessThan(client.MaxAPIVersion, want) {
		want = client.MaxAPIVersion
	}
	if e.APIVersion != want {
		t.Errorf("the client speaks API %s; the engine speaks %s (min %s), the client at most %s", e.APIVersion, v.ApiVersion, v.MinAPIVersion, client.MaxAPIVersion)
	}
	if !strings.HasSuffix(e.Describe(), "(API "+want+")") {
		t.Errorf("Describe() = %q, want it to name API %s", e.Describe(), want)
	}
	t.Logf("%s; the engine reports API %s (min %s)", e.Describe(), v.ApiVersion, v.MinAPIVersion)
	// A request at that version is answered (the engine refuses a newer one).
	if _, err := e.ImageDigest(context.Background(), "benchbook-test/no-such-image:0"); err == nil || !strings.Contains(err.Error(), "is not on this engine") {
		t.Errorf("an absent image: %v, want the engine's not-found", err)
	}
}
