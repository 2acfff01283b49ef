package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// canaries are the secrets TestSecretTaint plants, each through another
// flow; a run of 6 of their bytes (forwards or backwards) must appear in no
// output. -p gives the first two.
type canary struct{ secret, flow string }

var canaries = []canary{
	{"Cn01mWJmxkV4i", "-p pw= (a short secret name)"},
	{"Cn02Nx2dLK59u", "-p api= (no secret name), put in an X-Api-Key header with .format"},
	{"Cn03GhtQP2im8", "default of param(\"db_pass\")"},
	{"Cn04iKgPBEdEJ", "h[\"Authorization\"] = \"Bearer \" + tok, tok printed a cell before"},
	{"Cn05hvLJDwmUX", "\"Bearer %s\" % tok2, sliced"},
	{"Cn06wXG7RTStA", "[(\"Authorization\", \" \".join([\"Bearer\", tok3]))]"},
	{"Cn07nUsJYtdMN", "\"Token {}\".format(tok4), repr'd and str'd"},
	{"Cn08b4684qTBZ", "(password, user) = (..., \"bob\"), %-formatted, in a DSN, sliced"},
	{"Cn09GUnUphwH3", "a table's pw column"},
	{"Cn10HQKXgkuW4", "a table's pw column"},
	{"Cn11dH3A4ZdcW", "a literal split into a list named key_parts"},
	{"Cn12A5pvsbgdq", "a literal split into a list named key_parts"},
	{"Cn13SK3ZNfnxQ", "PASSWORD $$...$$"},
	{"Cn147snLQKLT6", "PASSWORD $tag$...$tag$"},
	{"Cn15tp5ywdnjm", "PASSWORD E'...', printed"},
	{"Cn16bnd3tx9Af", "PASSWORD U&'...'"},
	{"Cn17jUCsGBBzA", "PASSWORD $$\" + built + \"$$, built by concatenation"},
	{"Cn18vtXZFt59q", "[\"--requirepass\", X] given to backend.process, echoed in its log"},
	{"Cn23pQ7wRk3Ws", "password2 printed as \",\".join(password2.elems()) (searched for comma-joined)"},
	{"Cn19ei97eGepF", "a kernel cell's token literal"},
	{"Cn20gLP3E8vqx", "a kernel cell's param default"},
	{"Cn21N8RYCbkdC", "a kernel cell's table token column"},
	{"Cn22TrBzWbudF", "a kernel cell's header built by concatenation"},
}

// taintNotebook plants the canaries (but the -p ones and the kernel's).
const taintNotebook = `# %% [markdown]
# # Canaries through every operator

# %% params
pw = param("pw", "none")
api = param("api", "none")
db_pass = param("db_pass", "Cn03GhtQP2im8")

# %% lits
tok = "Cn04iKgPBEdEJ"
tok2 = "Cn05hvLJDwmUX"
tok3 = "Cn06wXG7RTStA"
tok4 = "Cn07nUsJYtdMN"
print("early", tok, tok2[1:9])

# %% hdrs
h = {}
h["Authorization"] = "Bearer " + tok
h2 = {"Authorization": "Bearer %s" % tok2}
h3 = [("Authorization", " ".join(["Bearer", tok3]))]
h4 = {"X-Api-Key": "{}".format(api)}
h5 = {"Authorization": "Token {}".format(tok4)}
print(h["Authorization"], h2, h3)
print("slices:", tok[3:11], tok2[-8:], tok3[:9])
print("repr:", repr(tok4), str([tok4]), "upper:", tok.upper())
print("api:", api, "pw:", pw, "db_pass:", db_pass)
show(h4, h5)

# %% unpack
(password, user) = ("Cn08b4684qTBZ", "bob")
print(password, user)
print("user %s has password %s" % (user, password))
pw_table = table([{"user": "bob", "pw": "Cn09GUnUphwH3"}, {"user": "ann", "pw": "Cn10HQKXgkuW4"}])
pw_table

# %% derived
rev = tok[::-1]
dsn = "postgres://bob:%s@127.0.0.1:1/db" % password
parts = "Cn11dH3A4ZdcW:Cn12A5pvsbgdq".split(":")
key_parts = parts
print(rev, dsn.split(":")[2][:10], parts[1][2:])
print(tok2[::-1][:8])
password2 = "Cn23pQ7wRk3Ws"
print(",".join(password2.elems()))
json.encode({"t": tok, "h": h, "p": pw})

# %% pg
pg = backend.postgres()

# %% roles
pg.exec("CREATE ROLE r1 LOGIN PASSWORD $$Cn13SK3ZNfnxQ$$")
pg.exec("ALTER ROLE r1 PASSWORD $tag$Cn147snLQKLT6$tag$")
pg.exec("ALTER ROLE r1 PASSWORD E'Cn15tp5ywdnjm'")
pg.exec("ALTER ROLE r1 PASSWORD U&'Cn16bnd3tx9Af'")
_built = "Cn17" + "jUCsGBBzA"
pg.exec("ALTER ROLE r1 PASSWORD $$" + _built + "$$")
pg.exec("ALTER ROLE r1 PASSWORD '%s'" % pw)
print("ran: ALTER ROLE r1 PASSWORD E'Cn15tp5ywdnjm'")
pg.snapshot("roles")
texts = [r["query"] for r in pg.query("SELECT query FROM pg_stat_statements")]
print(texts)

# %% proc
srv = backend.process(["sh", "-c", "echo started with $0 $1; exec sleep 60", "--requirepass", "Cn18vtXZFt59q"], ready = "log:started")
print(srv.logs())
srv
`

// kernelCells are executed by a kernel (iopub.py), each echoed on iopub
// (execute_input) before it runs.
var kernelCells = []string{
	"# %% k1\napi_token = \"Cn19ei97eGepF\"\nkd = param(\"token\", \"Cn20gLP3E8vqx\")\nlen(api_token)",
	"# %% k2\ntable([{\"user\": \"u\", \"token\": \"Cn21N8RYCbkdC\"}])",
	"# %% k3\nkh = {}\nkh[\"Authorization\"] = \"Bearer \" + \"Cn22TrBzWbudF\"\nprint(kh, api_token[2:], kd)",
}

// TestSecretTaint plants 19 canary secrets through assignment,
// concatenation, % and .format, join, tuples and unpacking, slices,
// repr/str/upper, reversal, json.encode, table columns, SQL quoting forms
// and a process's argv, runs the notebook through the CLI (run twice,
// render -format md and json, cells, cells -json, with a real PostgreSQL
// and a snapshot), and greps every output for every run of 6 bytes of
// every canary, forwards, backwards and comma-joined: the record (HTML,
// Markdown, JSON), every file under the cache dir (the data dir's
// pg_stat_statements.stat and the snapshots' included), last-params.json,
// stdout and stderr; each decoded as it is, HTML-, JSON- and
// URL-unescaped, and every base64 and hex run in it decoded.
func TestSecretTaint(t *testing.T) {
	t.Parallel()
	needs.Postgres(t)
	dir := t.TempDir()
	nb := filepath.Join(dir, "nb.star")
	if err := os.WriteFile(nb, []byte(taintNotebook), 0o644); err != nil {
		t.Fatal(err)
	}
	params := []string{"-p", "pw=" + canaries[0].secret, "-p", "api=" + canaries[1].secret}
	var outputs []output
	cli := func(args ...string) {
		defer func(start time.Time) { t.Logf("benchbook %s: %v", args[0], time.Since(start)) }(time.Now())
		cmd := exec.Command(cliBinary(t), args...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		outputs = append(outputs, output{"benchbook " + args[0] + " stdout", stdout.String()},
			output{"benchbook " + args[0] + " stderr", stderr.String()})
		if err != nil {
			t.Fatalf("benchbook %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
	}
	cli(append(append([]string{"run"}, params...), nb)...)
	cli(append(append([]string{"run"}, params...), nb)...)
	cli("render", "-format", "md", nb)
	cli("render", "-format", "json", nb)
	cli("cells", nb)
	cli("cells", "-json", nb)

	var snapshots, statFiles int
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || p == nb {
			return nil
		}
		outputs = append(outputs, output{"file name " + p, p})
		if info.IsDir() {
			if filepath.Base(filepath.Dir(p)) == "snapshots" {
				snapshots++
			}
			return nil
		}
		if info.Name() == "pg_stat_statements.stat" {
			statFiles++
		}
		data, err := os.ReadFile(p)
		if err == nil {
			outputs = append(outputs, output{p, string(data)})
		}
		return nil
	})
	// The test proves nothing about a file that was not written.
	if snapshots == 0 || statFiles < 2 {
		t.Errorf("%d snapshots, %d pg_stat_statements.stat files: want the data dir's and a snapshot's", snapshots, statFiles)
	}
	for _, want := range []string{"nb.html", "nb.md", "nb.json", "last-params.json", "listings.json"} {
		found := false
		for _, o := range outputs {
			found = found || filepath.Base(o.what) == want
		}
		if !found {
			t.Errorf("no %s was written", want)
		}
	}

	scan := time.Now()
	checkCanaries(t, outputs, canaries[:19])
	t.Logf("scanned in %v", time.Since(scan))
}

// TestSecretTaintKernel: the kernel's cells plant 4 more canaries (a
// token, a parameter's default, a table's token column, a header built by
// concatenation); none is in any message the kernel sent (execute_input,
// which echoes each cell's code to every frontend before it runs, the
// history, outputs, replies) or in any file of its cache.
func TestSecretTaintKernel(t *testing.T) {
	t.Parallel()
	checkCanaries(t, kernelOutputs(t), canaries[19:])
}

// checkCanaries fails for every canary a run of which one of the outputs
// holds, decoded every way.
func checkCanaries(t *testing.T, outputs []output, planted []canary) {
	t.Helper()
	grams := canaryGrams(planted)
	leaks := map[string][]string{}
	seen := map[[32]byte]bool{} // a snapshot's files are the data dir's, mostly
	for _, o := range outputs {
		sum := sha256.Sum256([]byte(o.text))
		if seen[sum] {
			continue
		}
		seen[sum] = true
		for _, text := range decodings(o.text) {
			for _, c := range grams.find(text) {
				leaks[c] = append(leaks[c], o.what+": "+excerptAround(text, c))
			}
		}
		if len(o.text) < 1<<20 {
			lower := strings.ToLower(o.text)
			for _, c := range planted {
				if strings.Contains(lower, strings.ToLower(c.secret)) {
					leaks[c.secret] = append(leaks[c.secret], o.what+" (case-insensitive)")
				}
			}
		}
	}
	for _, c := range planted {
		if where := leaks[c.secret]; len(where) > 0 {
			sort.Strings(where)
			t.Errorf("%s (%s) leaked in %d places, e.g.\n  %s", c.secret, c.flow, len(where), strings.Join(where[:min(3, len(where))], "\n  "))
		}
	}
	t.Logf("%d outputs checked, %d canaries leaked", len(outputs), len(leaks))
}

type output struct{ what, text string }

// kernelOutputs runs kernelCells in a kernel and returns every message it
// sent (iopub, replies, the history) as JSON.
func kernelOutputs(t *testing.T) []output {
	env := installKernel(t)
	dir := t.TempDir()
	cells, _ := json.Marshal(kernelCells)
	script := filepath.Join(dir, "cells.json")
	if err := os.WriteFile(script, cells, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runPython(t, env, dir, 3*time.Minute, "iopub.py", script)
	if err != nil {
		t.Fatalf("iopub.py: %v\n%s", err, out)
	}
	var got struct {
		Messages []json.RawMessage
		Inputs   int
	}
	if err := json.Unmarshal([]byte(lastLines(out, 1)), &got); err != nil {
		t.Fatalf("iopub.py's report: %v\n%s", err, out)
	}
	if got.Inputs != len(kernelCells) {
		t.Errorf("%d execute_input messages for %d cells: the test would prove nothing about them", got.Inputs, len(kernelCells))
	}
	outs := []output{{"kernel messages", lastLines(out, 1)}}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && p != script {
			data, _ := os.ReadFile(p)
			outs = append(outs, output{"kernel dir " + p, string(data)})
		}
		return nil
	})
	return outs
}

// gramSet maps every 6-byte run of every canary, of it reversed and of
// it comma-joined, to the canary.
type gramSet map[string]string

func canaryGrams(planted []canary) gramSet {
	g := gramSet{}
	for _, c := range planted {
		rev := []byte(c.secret)
		for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
			rev[i], rev[j] = rev[j], rev[i]
		}
		for _, s := range []string{c.secret, string(rev), strings.Join(strings.Split(c.secret, ""), ",")} {
			for i := 0; i+6 <= len(s); i++ {
				g[s[i:i+6]] = c.secret
			}
		}
	}
	return g
}

// find lists the canaries text holds a run of.
func (g gramSet) find(text string) []string {
	seen := map[string]bool{}
	var out []string
	for i := 0; i+6 <= len(text); i++ {
		if c, ok := g[text[i:i+6]]; ok && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// runs are the longest runs of bytes in set, at least min long (a loop:
// a regular expression took 10 s over the data dir's files).
func runs(text string, set func(byte) bool, min int) []string {
	var out []string
	start := -1
	for i := 0; i <= len(text); i++ {
		if i < len(text) && set(text[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= min {
			out = append(out, text[start:i])
		}
		start = -1
	}
	return out
}

func isHex(b byte) bool { return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F' }

func isBase64(b byte) bool {
	return isHex(b) || 'g' <= b && b <= 'z' || 'G' <= b && b <= 'Z' || b == '+' || b == '/' || b == '_' || b == '-'
}

// decodings are text and what it says decoded: HTML, JSON and URL
// escapes undone, and every base64 or hex run decoded (at every
// alignment), then unescaped once more.
func decodings(text string) []string {
	out := []string{text}
	if utf8.ValidString(text) { // escapes mean nothing in a relation file or the WAL
		out = append(out, unescapes(text)...)
	}
	for _, run := range runs(text, isBase64, 8) {
		for off := 0; off < 4 && off < len(run); off++ {
			r := run[off:]
			for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				if b, err := enc.DecodeString(r[:len(r)/4*4]); err == nil {
					out = append(out, string(b))
					out = append(out, unescapes(string(b))...)
				}
			}
		}
	}
	for _, run := range runs(text, isHex, 12) {
		for off := 0; off < 2; off++ {
			r := run[off:]
			if b, err := hex.DecodeString(r[:len(r)/2*2]); err == nil {
				out = append(out, string(b))
			}
		}
	}
	return out
}

func unescapes(s string) []string {
	var out []string
	if h := html.UnescapeString(s); h != s {
		out = append(out, h)
	}
	if u, err := url.QueryUnescape(s); err == nil && u != s {
		out = append(out, u)
	} else if strings.Contains(s, "%") {
		out = append(out, lenientURL(s))
	}
	if strings.Contains(s, `\`) {
		out = append(out, jsonUnescape(s))
	}
	return out
}

var pctRun = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)

func lenientURL(s string) string {
	return pctRun.ReplaceAllStringFunc(s, func(m string) string {
		b, _ := hex.DecodeString(m[1:])
		return string(b)
	})
}

var jsonString = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// jsonUnescape decodes every JSON string literal in s in place.
func jsonUnescape(s string) string {
	return jsonString.ReplaceAllStringFunc(s, func(m string) string {
		var v string
		if json.Unmarshal([]byte(m), &v) == nil {
			return v
		}
		return m
	})
}

func excerptAround(text, canary string) string {
	for i := 0; i+6 <= len(canary); i++ {
		if j := strings.Index(text, canary[i:i+6]); j >= 0 {
			lo, hi := max(0, j-60), min(len(text), j+40)
			return fmt.Sprintf("...%q...", text[lo:hi])
		}
	}
	return "(reversed)"
}

// TestREPLMasksSecrets: what the terminal REPL prints of a secret (the
// value, a slice, what a call reading it printed) is masked, as the
// kernel's results are. Before, the REPL printed values in clear.
func TestREPLMasksSecrets(t *testing.T) {
	nb := writeNB(t, "# %% a\nx = 1\n")
	cmd := exec.Command(cliBinary(t), "repl", nb)
	cmd.Stdin = strings.NewReader(`tok = "Rp1kX9vQ2mZ"
h = {"Authorization": "Bearer " + tok}
tok
print(tok[2:10])
tok[::-1]
`)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("repl: %v\n%s", err, errb.String())
	}
	text := out.String() + errb.String()
	for _, leak := range []string{"Rp1kX9vQ2mZ", "1kX9vQ2m", "Zm2Qv9Xk1pR"} {
		if strings.Contains(text, leak) {
			t.Errorf("%s leaked:\n%s", leak, text)
		}
	}
	if strings.Count(text, "xxxxx") < 3 {
		t.Errorf("want three masked outputs:\n%s", text)
	}
}
