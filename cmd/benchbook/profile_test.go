package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// cellKeys runs nb with its cache in dir and returns the cache key of
// every cell, as the cache's own memory of the run holds them.
func cellKeys(t *testing.T, dir, nb string, args ...string) map[string]string {
	t.Helper()
	cache := filepath.Join(dir, "cache")
	full := append([]string{"run", "-cache-dir", cache, "-o", filepath.Join(dir, "nb.html")}, args...)
	code, _, stderr := runCLI(t, append(full, nb)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(cache, "v1", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := bytes.Cut(data, []byte("\n")) // after the checksum header
	var mem map[string]struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal(body, &mem); err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for name, m := range mem {
		keys[name] = m.Key
	}
	return keys
}

// keyNotebook is a run cell as notebooks wrote it before profile = True
// existed; its key was computed at bc332ef, before any of it.
const keyNotebook = `# %% r
r = workload.http("http://127.0.0.1:1/", clients = 1, duration = "0.2s", warmup = 0)
`

// A run cell without profile keeps the very key it had before profiles:
// profiling never changes what the cache key of a run without it is.
func TestRunKeyWithoutProfileUnchanged(t *testing.T) {
	dir := t.TempDir()
	nb := filepath.Join(dir, "nb.star")
	if err := os.WriteFile(nb, []byte(keyNotebook), 0o644); err != nil {
		t.Fatal(err)
	}
	const golden = "90c1cf3f802800ffcddb104cc998861a137646e36dfc588b96f6383bc3a01fcb"
	if got := cellKeys(t, dir, nb)["r"]; got != golden {
		t.Errorf("the run cell's key is %s, it was %s before profiles", got, golden)
	}
}
