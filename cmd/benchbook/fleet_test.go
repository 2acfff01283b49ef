package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const fleetNB = `# %% fleet
agents = workload.agents(local = 2)

# %% load
r = workload.http(param("url", ""), clients = 2, duration = param("duration", "1s"), warmup = "0s", agents = agents)
r
`

// A notebook whose load comes from two `benchbook agent` processes: the
// record has the per-agent table.
func TestFleetNotebook(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	nb := writeNB(t, fleetNB)
	code, _, stderr := runCLI(t, "run", "-no-color", "-p", "url="+srv.URL+"/", nb)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	html, _ := os.ReadFile(strings.TrimSuffix(nb, ".star") + ".html")
	if !bytes.Contains(html, []byte(`<table class="agents">`)) || !bytes.Contains(html, []byte("local/1")) {
		t.Fatal("the record has no per-agent table")
	}
}

// Ctrl-C during a fleet run stops every agent: benchbook exits 130 within
// seconds, the record says interrupted, and no agent process is left.
func TestFleetInterruptLeavesNothing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	nb := writeNB(t, fleetNB)
	mark := fmt.Sprintf("BENCHBOOK_FLEET_TEST=%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd := exec.Command(binary, "run", "-no-color", "-p", "url="+srv.URL+"/", "-p", "duration=60s", nb)
	cmd.Env = append(os.Environ(), mark)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killMarked(mark) })
	deadline := time.Now().Add(30 * time.Second)
	for agents(mark) < 2 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the agents never started:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // into the run
	sent := time.Now()
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if took := time.Since(sent); took > 8*time.Second {
		t.Errorf("exit took %v after Ctrl-C", took)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v\n%s", err, out.String())
	}
	time.Sleep(300 * time.Millisecond)
	if n := agents(mark); n != 0 {
		t.Fatalf("%d agent processes left after Ctrl-C", n)
	}
	html, _ := os.ReadFile(strings.TrimSuffix(nb, ".star") + ".html")
	if !bytes.Contains(html, []byte("interrupted")) {
		t.Error("the record does not say the run was interrupted")
	}
}

// agents counts live `benchbook agent` processes carrying mark.
func agents(mark string) int {
	n := 0
	for _, p := range procs(mark) {
		if p.marked && strings.HasSuffix(p.cmdline, " agent") {
			n++
		}
	}
	return n
}
