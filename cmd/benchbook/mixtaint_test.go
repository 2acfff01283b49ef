package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mixCanaries reach a request mix and http.get only through a header whose
// name the source does not show (built by concatenation) or a URL's query,
// so only the calls themselves can learn them; the notebook then prints
// each one whole.
var mixCanaries = []canary{
	{"Cm01qZ7xVw3Kd", "a mix entry's Authorization header, its name built by concatenation"},
	{"Cm02Hs8pLn4Tb", "a mix entry's url ?access_token=, in the entry's default tag"},
	{"Cm03Rt6yWc9Jf", "http.get's Authorization header, its name built by concatenation"},
	{"Cm04Gv2kPx5Nm", "a concurrent scenario's mix entry header, its name built by concatenation"},
}

const mixTaintNotebook = `# %% target
a = param("a", "none")
b = param("b", "none")
c = param("c", "none")
d = param("d", "none")
hn = "Author" + "ization"
t = backend.demo(rows = 1000)

# %% mix
mix = [
    {"url": "/items/1", "headers": {hn: "Bearer " + a}, "tag": "read"},
    {"url": "/items/2?access_token=" + b},
]
r = workload.http(t.url, requests = mix, clients = 2, duration = "300ms", warmup = "0s")
r

# %% get
resp = http.get(t.url + "/items/1", headers = {hn: "Bearer " + c})
resp

# %% legs
legs = workload.concurrent({
    "reads": lambda: workload.http(t.url, requests = [{"url": "/items/3", "headers": {hn: "Bearer " + d}, "tag": "x"}], clients = 1),
}, duration = "300ms", warmup = "0s")
legs

# %% shown
print("a:", a, "b:", b, "c:", c, "d:", d)
print(r.by_tag.keys())
`

// TestMixMasksSecrets: a mix's headers and urls, a concurrent scenario's
// and http.get's headers hide their secrets as workload.http's own headers
// do, in every output of a run and a render from the cache.
func TestMixMasksSecrets(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end notebook run")
	}
	dir := t.TempDir()
	nb := filepath.Join(dir, "nb.star")
	if err := os.WriteFile(nb, []byte(mixTaintNotebook), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	args := []string{"run", "-cache-dir", cache, "-o", filepath.Join(dir, "nb.html")}
	for i, name := range []string{"a", "b", "c", "d"} {
		args = append(args, "-p", name+"="+mixCanaries[i].secret)
	}
	var outputs []output
	for _, argv := range [][]string{append(args, nb), {"render", "-cache-dir", cache, "-format", "md", "-o", filepath.Join(dir, "nb.md"), nb}} {
		code, stdout, stderr := runCLI(t, argv...)
		outputs = append(outputs, output{argv[0] + " stdout", stdout}, output{argv[0] + " stderr", stderr})
		if code != 0 {
			t.Fatalf("benchbook %s: exit %d\n%s", argv[0], code, stderr)
		}
	}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || p == nb {
			return nil
		}
		if data, err := os.ReadFile(p); err == nil {
			outputs = append(outputs, output{p, string(data)})
		}
		return nil
	})
	// The test proves nothing about a tag the record does not show.
	page, _ := os.ReadFile(filepath.Join(dir, "nb.html"))
	for _, want := range []string{"GET /items/2?access_token=", "reads"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the record lacks %q", want)
		}
	}
	checkCanaries(t, outputs, mixCanaries)
}
