package process

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
	"github.com/benchbook/benchbook/stdlib"
)

// TestEachProcessIsATarget: two processes a cell starts are two lines of
// the record's provenance, each naming the command it runs and the hash of
// its binary, so a reader tells the arms apart (issue 52: the record said
// one "server" line for two targets, or nothing of what they ran).
func TestEachProcessIsATarget(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	cell := &runtime.Cell{Name: "targets"}
	startest.MustExec(t, startest.Options{Cell: cell, Modules: modules, Stdlib: stdlib.FS}, `
a = backend.process(["sleep", "30"])
b = backend.process(["sleep", "31"])
a.stop(grace = "100ms")
b.stop(grace = "100ms")
`)
	var got []string
	for _, in := range cell.Inputs() {
		if in.Kind == "server" {
			got = append(got, in.Name)
		}
	}
	if len(got) != 2 {
		t.Fatalf("server inputs %q, want one per process", got)
	}
	hash := hex.EncodeToString(sum[:])[:16]
	for i, want := range []string{"process: sleep 30 (", "process: sleep 31 ("} {
		if !strings.HasPrefix(got[i], want) || !strings.Contains(got[i], "sha256:"+hash) {
			t.Errorf("target %d: %q, want %q... naming the binary's sha256:%s", i, got[i], want, hash)
		}
	}
}
