package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
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
	return readKeys(t, cache)
}

// readKeys reads the key of every cell from the cache's own memory of
// the last run.
func readKeys(t *testing.T, cache string) map[string]string {
	t.Helper()
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

// goldenRunKey is keyNotebook's run cell's key, computed at bc332ef.
const goldenRunKey = "90c1cf3f802800ffcddb104cc998861a137646e36dfc588b96f6383bc3a01fcb"

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
	if got := cellKeys(t, dir, nb)["r"]; got != goldenRunKey {
		t.Errorf("the run cell's key is %s, it was %s before profiles", got, goldenRunKey)
	}
}

// A run cell with profile = True has a key of its own.
func TestRunKeyWithProfileDiffers(t *testing.T) {
	dir := t.TempDir()
	nb := filepath.Join(dir, "nb.star")
	src := strings.Replace(keyNotebook, `warmup = 0)`, `warmup = 0, profile = True)`, 1)
	if err := os.WriteFile(nb, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	code, _, stderr := runCLI(t, "run", "-cache-dir", cache, "-o", filepath.Join(dir, "nb.html"), nb)
	if code != 1 || !strings.Contains(stderr, "workload.http: profile = True: no target to sample") {
		t.Fatalf("exit %d, want the run to fail for want of a target:\n%s", code, stderr)
	}
	if got := readKeys(t, cache)["r"]; got == "" || got == goldenRunKey {
		t.Errorf("the run cell with profile = True has key %q, the one without %q", got, goldenRunKey)
	}
}

// hotNotebook is the acceptance test as a notebook: two hot
// servers, A doing hotA's work and B hotB's, profiled in an ABAB
// experiment, and compare_profiles on it.
const hotNotebook = `# %% [markdown]
# # Where does the hot server spend its CPU?

# %% params
bin = param("bin", "")
pairs = param("pairs", 6)
duration = param("duration", "1s")

# %% servers
servers = {arm: backend.process([bin, "-arm", arm], ready = "log:listening") for arm in ["A", "B"]}

# %% runs
load("@std/abab.star", "abab")

def _url(arm):
    return "http://" + servers[arm].logs(tail = 5).split("listening ")[1].split("\n")[0].strip() + "/"

def _run(arm):
    return workload.http(_url(arm), clients = 2, duration = duration, warmup = "300ms", profile = True)

exp = abab(arms = {"A": None, "B": None}, pairs = pairs, run = _run)

# %% why
why = compare_profiles(exp)
why

# %% one
one = exp.runs["A"][0].profile
[one.samples, one.requests, hash(one.folded)]

# %% top
[(f.name, f.delta_us_per_req, f.ci, f.p_value, f.p_adjusted, f.confidence, f.deltas) for f in why.functions[:8]]
`

// buildHotServer builds the profiler's test target.
func buildHotServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hotserver")
	out, err := exec.Command("go", "build", "-o", bin, "../../builtins/internal/profile/testdata/hotserver").CombinedOutput()
	if err != nil {
		t.Fatalf("building hotserver: %v\n%s", err, out)
	}
	return bin
}

// jsonOutputs are each cell's outputs in a JSON record.
func jsonOutputs(t *testing.T, path string) map[string][]json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Cells []struct {
			Name    string            `json:"name"`
			Outputs []json.RawMessage `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	out := map[string][]json.RawMessage{}
	for _, c := range rec.Cells {
		out[c.Name] = c.Outputs
	}
	return out
}

// The acceptance test, from a notebook: profile = True on an
// ABAB experiment of six pairs of the hot server (fewer leave the paired
// t, with 5 df or fewer and ~100 functions in its family, too little
// power on a busy box) names hotA (B spends less in it) and
// hotB (more) with intervals that exclude 0; the HTML record has the
// three flame graphs and each arm's folded stacks; and a second run is
// all cache hits with the very same profiles.
func TestHotServerNotebook(t *testing.T) {
	if testing.Short() {
		t.Skip("eight profiled runs: not in -short")
	}
	if _, err := exec.LookPath("perf"); err != nil {
		needs.Missing(t, "perf", "apt-get install linux-perf")
	}
	dir := t.TempDir()
	nb := filepath.Join(dir, "hot.star")
	if err := os.WriteFile(nb, []byte(hotNotebook), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := buildHotServer(t)
	args := func(format, out string) []string {
		return []string{"run", "-cache-dir", filepath.Join(dir, "cache"), "-format", format, "-o", filepath.Join(dir, out),
			"-p", "bin=" + bin, nb}
	}
	start := time.Now()
	code, _, stderr := runCLI(t, args("json", "first.json")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	t.Logf("first run: %s", time.Since(start))
	first := jsonOutputs(t, filepath.Join(dir, "first.json"))
	var why struct {
		Type  string `json:"type"`
		Text  string `json:"text"`
		Value struct {
			Functions []struct {
				Name    string   `json:"name"`
				A       float64  `json:"a_us_per_req"`
				B       float64  `json:"b_us_per_req"`
				Delta   float64  `json:"delta_us_per_req"`
				Low     *float64 `json:"ci_low"`
				High    *float64 `json:"ci_high"`
				Verdict string   `json:"verdict"`
			} `json:"functions"`
		} `json:"value"`
	}
	if len(first["why"]) != 1 || json.Unmarshal(first["why"][0], &why) != nil || why.Type != "profile_comparison" {
		t.Fatalf("the why cell shows %s", first["why"])
	}
	t.Logf("%s", why.Text)
	defer func() {
		if t.Failed() {
			t.Logf("the eight largest changes (name, delta, ci, p, adjusted p, confidence, per pair):\n%s", first["top"])
		}
	}()
	found := map[string]bool{}
	for _, f := range why.Value.Functions {
		want, ok := map[string]string{"main.hotA": "IMPROVES", "main.hotB": "WORSENS"}[f.Name]
		if !ok {
			continue
		}
		found[f.Name] = true
		t.Logf("%s: %.1f -> %.1f µs/req, %+.1f [%v, %v] %s", f.Name, f.A, f.B, f.Delta, deref(f.Low), deref(f.High), f.Verdict)
		if f.Verdict != want || (f.Delta < 0) != (want == "IMPROVES") {
			t.Errorf("%s: %s, delta %+.1f µs/req; want %s", f.Name, f.Verdict, f.Delta, want)
		}
		if f.Low == nil || f.High == nil || !(*f.Low > 0 || *f.High < 0) {
			t.Errorf("%s: interval [%v, %v] does not exclude 0", f.Name, deref(f.Low), deref(f.High))
		}
	}
	if !found["main.hotA"] || !found["main.hotB"] {
		t.Errorf("hotA and hotB are not among the functions of the table: %s", first["why"])
	}

	code, _, stderr = runCLI(t, args("html", "hot.html")...)
	if code != 0 || strings.Contains(stderr, " ran") {
		t.Fatalf("second run: exit %d, want only hits and live cells:\n%s", code, stderr)
	}
	page, err := os.ReadFile(filepath.Join(dir, "hot.html"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), `<g data-name="main.hotA"`); n < 3 {
		t.Errorf("main.hotA is in %d flame graphs of the record, want the differential and both arms'", n)
	}
	for _, want := range []string{`download="A.folded"`, `download="B.folded"`, "Benjamini-Hochberg"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the record lacks %s", want)
		}
	}
	code, _, stderr = runCLI(t, args("json", "again.json")...)
	if code != 0 || strings.Contains(stderr, " ran") {
		t.Fatalf("third run: exit %d:\n%s", code, stderr)
	}
	again := jsonOutputs(t, filepath.Join(dir, "again.json"))
	for _, cell := range []string{"why", "one"} {
		a, _ := json.Marshal(first[cell])
		b, _ := json.Marshal(again[cell])
		if len(first[cell]) == 0 || string(a) != string(b) {
			t.Errorf("cell %s shows after a cached rerun:\n%s\nafter a fresh one:\n%s", cell, again[cell], first[cell])
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
