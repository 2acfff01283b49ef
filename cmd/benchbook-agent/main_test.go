package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/h1wire"
)

// The agent links no Starlark, none of the engine's renderers and not the
// Jupyter kernel's ZeroMQ: a load box runs the generator and the fleet
// protocol only. Of runtime it links the three leaves made for that:
// filehash, bytesize (the host guard's sizes) and procfs (/proc).
func TestAgentLinksNoEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"go.starlark.net", "github.com/yuin/goldmark", "github.com/alecthomas/chroma",
			"github.com/benchbook/benchbook/runtime", "github.com/go-zeromq/zmq4"} {
			leaf := dep == "github.com/benchbook/benchbook/runtime/filehash" || dep == "github.com/benchbook/benchbook/runtime/bytesize" ||
				dep == "github.com/benchbook/benchbook/runtime/procfs"
			if dep == banned || strings.HasPrefix(dep, banned+"/") && !leaf {
				t.Errorf("the agent links %s", dep)
			}
		}
	}
}

// The test binary doubles as benchbook-agent, so a local fleet runs this
// command's main in real processes.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "agent" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A local fleet of two benchbook-agents against a loopback target: every
// request the merged run counts reached the target, none twice.
func TestAgentRunsAFleetShare(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { served.Add(1) }))
	defer srv.Close()
	spec := loadgen.Spec{Rate: 200, Duration: 500 * time.Millisecond, Window: 250 * time.Millisecond, Timeout: time.Second, MaxInflight: 8}
	m, err := fleet.RunLoad(context.Background(), &fleet.Local{Binary: os.Args[0]}, 2, "http",
		fleet.Load{Spec: spec, HTTP: &h1wire.HTTPSpec{URL: srv.URL + "/"}}, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Incomplete || len(m.Rows) != 2 || m.Count == 0 || m.Rows[0].Count+m.Rows[1].Count != m.Count {
		t.Fatalf("incomplete %v, count %d, rows %+v", m.Incomplete, m.Count, m.Rows)
	}
	if m.Count > served.Load() {
		t.Fatalf("the run counts %d successes, the target served %d", m.Count, served.Load())
	}
}
