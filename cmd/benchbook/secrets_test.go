package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// plantedSecrets are the passwords TestSecretsNeverLeave plants, each in
// another position. The needles are what must appear nowhere: the whole
// password and, where it has a separator a half-working scrubber stops at,
// the part after it.
var plantedSecrets = []struct{ where, password string }{
	{"-p dsn (URL form)", "Dsn1pArAm"},
	{"a cell's displayed value", "Lit2vAlue"},
	{"a table cell (password column)", "Tbl3cEll"},
	{"a struct field", "Str4fIeld"},
	{"keyword form", "Kw5fOrm"},
	{"HTTP URL userinfo of a workload target", "Http6uSer"},
	{"a quoted password", "Qt7 qU0t3d9"},
	{"'@' inside a password", "At8s3cr@tATq9"},
	{"-p api_token (secret name)", "Tok9pArAm"},
	{"a password-named param() at its default", "Def10pAss"},
	{"a hyphenated key (X-Api-Key)", "Hyph11kEy"},
	{"a hyphenated key (api-key)", "Hyph12kEy"},
	{"an Authorization header value", "Bearer Auth13hDr"},
	{"a Cookie header value", "session=Cook14iE"},
	{"a value under auth", "Auth15tUp"},
	{"a value under credentials", "Cred16eNt"},
	{"a value under cookie", "Cook17vAl"},
}

func needles() []string {
	var out []string
	for _, s := range plantedSecrets {
		out = append(out, s.password)
		if i := strings.IndexAny(s.password, " @="); i > 0 {
			out = append(out, s.password[i+1:]) // "qU0t3d9", "tATq9", "Cook14iE": what a half-scrub leaves
		}
	}
	return out
}

// secretsNotebook plants the passwords; PORT is the loopback server's.
const secretsNotebook = `# %% [markdown]
# # Secrets stay out of every output

# %% conn
dsn = param("dsn", "postgres://nobody@127.0.0.1:1/none")
token = param("api_token", "none")
dsn

# %% shown
token

# %% literal
literal = "postgresql://bob:Lit2vAlue@db.example:5432/app"
literal

# %% tbl
creds = table([{"user": "u", "password": "Tbl3cEll"}, {"user": "v", "password": None}])
creds

# %% st
st = struct(user = "u", password = "Str4fIeld", via = dsn)
st

# %% kw
kw = "host=127.0.0.1 user=u password=Kw5fOrm dbname=d"
print("connecting with", kw)
kw

# %% quoted
quoted = "host=h password='Qt7 qU0t3d9' user=u"
print(quoted)
{"conn": quoted}

# %% at
at = "postgres://u:At8s3cr@tATq9@host/db"
at

# %% defaults
db_pw = param("db_password", "Def10pAss")
db_pw

# %% hyph
headers = {"X-Api-Key": "Hyph11kEy", "api-key": "Hyph12kEy", "Authorization": "Bearer Auth13hDr", "Cookie": "session=Cook14iE"}
print("Authorization: Bearer " + headers["Authorization"].split(" ")[1])
print(headers["Cookie"].split("=")[1], headers["X-Api-Key"])
headers

# %% under
req = {"auth": ("u", "Auth15tUp"), "credentials": {"user": "u", "pw": "Cred16eNt"}, "cookie": "Cook17vAl"}
print(req["auth"][1], req)
req

# %% target
url = "http://alice:Http6uSer@127.0.0.1:PORT/ok"

# %% load
r = workload.http(url, clients = 1, duration = "300ms", warmup = "0s")
data = export.csv(r)
show(r, data)
`

// TestSecretsNeverLeave runs a notebook holding 9 planted passwords through
// the real CLI (run, render -format md/json, cells, cells -json) and finds
// none of them in any output: records, stdout, stderr, every file under
// the cache dir (as text or base64), every download's name and content.
func TestSecretsNeverLeave(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	nb := filepath.Join(dir, "nb.star")
	if err := os.WriteFile(nb, []byte(strings.ReplaceAll(secretsNotebook, "PORT", fmt.Sprint(port))), 0o644); err != nil {
		t.Fatal(err)
	}
	params := []string{"-p", "dsn=postgres://bench:Dsn1pArAm@127.0.0.1:1/db", "-p", "api_token=Tok9pArAm"}
	var outputs []string // "what: text"
	cli := func(args ...string) string {
		cmd := exec.Command(cliBinary(t), args...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		what := strings.Join(args[:1], " ")
		outputs = append(outputs, what+" stdout:\n"+stdout.String(), what+" stderr:\n"+stderr.String())
		if err != nil {
			t.Fatalf("benchbook %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stderr.String()
	}
	runErr := cli(append(append([]string{"run"}, params...), nb)...)
	if hits.Load() == 0 {
		t.Fatalf("the workload never reached the server:\n%s", runErr)
	}
	cli(append(append([]string{"run"}, params...), nb)...) // a second, cached run
	cli("render", "-format", "md", nb)                     // the last run's parameters
	cli(append(append([]string{"render", "-format", "json"}, params...), nb)...)
	cli(append(append([]string{"cells"}, params...), nb)...)
	cli("cells", "-json", nb)

	files := map[string]string{}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && p != nb { // the notebook is the input, not an output
			data, _ := os.ReadFile(p)
			files[p] = string(data)
		}
		outputs = append(outputs, "file name: "+p)
		return nil
	})
	for _, want := range []string{"nb.html", "nb.md", "nb.json", "last-params.json", "state.json"} {
		if !hasFileNamed(files, want) {
			t.Errorf("no %s was written; the test would prove nothing about it", want)
		}
	}
	for p, text := range files {
		outputs = append(outputs, p+":\n"+text)
		for _, d := range dataURIs(text) {
			outputs = append(outputs, p+" download "+d)
		}
	}
	html := files[filepath.Join(dir, "nb.html")]
	if !strings.Contains(html, "download=") {
		t.Errorf("the record offers no download; the test would prove nothing about their names")
	}
	leaks := 0
	for _, out := range outputs {
		for _, n := range needles() {
			// Case-insensitive: file names are lower-cased on the way.
			if strings.Contains(strings.ToLower(out), strings.ToLower(n)) || len(n) >= 8 && containsBase64(out, n) {
				leaks++
				t.Errorf("%q leaked in %s", n, excerpt(out, n))
			}
		}
	}
	t.Logf("%d outputs checked (%d files), %d leaks", len(outputs), len(files), leaks)
}

func hasFileNamed(files map[string]string, name string) bool {
	for p := range files {
		if filepath.Base(p) == name {
			return true
		}
	}
	return false
}

var dataURI = regexp.MustCompile(`download="([^"]*)" href="data:[^;"]*;base64,([A-Za-z0-9+/=]*)"`)

// dataURIs decodes the record's embedded downloads: "name:\ncontent".
func dataURIs(html string) []string {
	var out []string
	for _, m := range dataURI.FindAllStringSubmatch(html, -1) {
		data, _ := base64.StdEncoding.DecodeString(m[2])
		out = append(out, m[1]+":\n"+string(data))
	}
	return out
}

// containsBase64 finds s inside any base64 text of out (a cache entry's
// values, a data: URI): s starts at one of three alignments, so one of
// three encodings of its middle is there. Only for needles long enough
// that chance will not make one up.
func containsBase64(out, s string) bool {
	for shift := range 3 {
		sub := s[shift:]
		sub = sub[:len(sub)/3*3]
		if len(sub) >= 3 && strings.Contains(out, base64.StdEncoding.EncodeToString([]byte(sub))) {
			return true
		}
	}
	return false
}

func excerpt(out, n string) string {
	i := strings.Index(strings.ToLower(out), strings.ToLower(n))
	if i < 0 {
		return strings.SplitN(out, "\n", 2)[0] + " (base64)"
	}
	what := strings.SplitN(out, "\n", 2)[0]
	lo, hi := max(0, i-80), min(len(out), i+len(n)+40)
	return fmt.Sprintf("%s: ...%q...", what, out[lo:hi])
}

// TestSecretParamWithheld: last-params.json keeps a secret parameter's hash
// only. That is enough for render to find the run (its cells are hits, not
// "never"), and a REPL that has to run the cell that reads it says to pass
// -p again instead of running it with the default under the run's key.
func TestSecretParamWithheld(t *testing.T) {
	nb := writeNB(t, "# %% conn\ndsn = param(\"dsn\", \"none\")\nn = len(dsn)\n\n# %% use\nm = n + 1\nm\n")
	if code, _, stderr := runCLI(t, "run", "-p", "dsn=postgres://u:Wh1thheld@h/db", nb); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	code, _, stderr := runCLI(t, "render", nb)
	if code != 0 || !strings.Contains(stderr, "-p dsn=xxxxx") || !regexp.MustCompile(`hit\s+use`).MatchString(stderr) {
		t.Errorf("render with the withheld parameter: exit %d\n%s", code, stderr)
	}
	cmd := exec.Command(cliBinary(t), "repl", nb)
	cmd.Stdin = strings.NewReader(":run conn\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Run()
	if !strings.Contains(errb.String()+out.String(), "set it again with -p dsn=") {
		t.Errorf("the REPL ran the cell without its secret:\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	if strings.Contains(errb.String()+out.String(), "Wh1thheld") {
		t.Errorf("the secret leaked:\n%s%s", out.String(), errb.String())
	}
}

// TestSecretHashSalted: a secret parameter reaches the cache only as a hash
// keyed with the cache's own random salt. The oracle greps every file under
// the cache for what an attacker would try passwords against: plain
// SHA-256 of the password and of the whole DSN, and the unsalted recipe
// keys used before, in hex and base64, whole or as a 16-character prefix.
// Within one cache the hash stays put (the second run is a hit); another
// cache gets another hash; a cache whose salt is gone (as one written
// before salting) recomputes instead of failing, and clean keeps the salt.
func TestSecretHashSalted(t *testing.T) {
	const password = "Sa1tedPw"
	dsn := "postgres://u:" + password + "@h/db"
	src := "# %% conn\ndsn = param(\"dsn\", \"none\")\nn = len(dsn)\n\n# %% use\nm = n + 1\nm\n"
	nb := writeNB(t, src)
	other := writeNB(t, src)
	cache, otherCache := filepath.Join(filepath.Dir(nb), ".benchbook", "nb"), filepath.Join(filepath.Dir(other), ".benchbook", "nb")
	run := func(path string) string {
		t.Helper()
		code, _, stderr := runCLI(t, "run", "-p", "dsn="+dsn, path)
		if code != 0 {
			t.Fatalf("run %s: exit %d\n%s", path, code, stderr)
		}
		return stderr
	}
	withheld := func(dir string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "v1", "last-params.json"))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`withheld:([0-9a-f]+)`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("last-params.json holds no withheld hash: %s", b)
		}
		return string(m[1])
	}

	run(nb)
	first := withheld(cache)
	if stderr := run(nb); !regexp.MustCompile(`hit\s+use`).MatchString(stderr) {
		t.Errorf("second run in one cache: use is not a hit:\n%s", stderr)
	}
	if again := withheld(cache); again != first {
		t.Errorf("one cache, two runs: hash %s then %s", first, again)
	}
	run(other)
	if h := withheld(otherCache); h == first {
		t.Errorf("two caches gave the same hash %s for one password", h)
	}
	for _, dir := range []string{cache, otherCache} {
		fi, err := os.Stat(filepath.Join(dir, "v1", "salt"))
		if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
			t.Errorf("%s: salt file %v, err %v; want 32 bytes, mode 0600", dir, fi, err)
		}
		assertNoPlainHash(t, dir, password, dsn)
	}

	// A cache without a salt, as one written before salting: its entries are
	// misses, the cells run again, and the run succeeds.
	if err := os.Remove(filepath.Join(cache, "v1", "salt")); err != nil {
		t.Fatal(err)
	}
	if stderr := run(nb); !regexp.MustCompile(`ran\s+use`).MatchString(stderr) {
		t.Errorf("after the salt was removed, use did not run again:\n%s", stderr)
	}
	if code, _, stderr := runCLI(t, "clean", "-p", "dsn="+dsn, nb); code != 0 {
		t.Fatalf("clean: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(cache, "v1", "salt")); err != nil {
		t.Errorf("clean removed the salt: %v", err)
	}
	if stderr := run(nb); !regexp.MustCompile(`hit\s+use`).MatchString(stderr) {
		t.Errorf("after clean, use is not a hit:\n%s", stderr)
	}
}

// assertNoPlainHash fails if any file under dir holds an unsalted hash of
// the password or the DSN.
func assertNoPlainHash(t *testing.T, dir, password, dsn string) {
	t.Helper()
	var needles []string
	for _, data := range []string{password, dsn, oldParamRecipe(dsn)} {
		sum := sha256.Sum256([]byte(data))
		for _, enc := range []string{hex.EncodeToString(sum[:]), base64.StdEncoding.EncodeToString(sum[:]),
			base64.RawURLEncoding.EncodeToString(sum[:])} {
			needles = append(needles, enc, enc[:16])
		}
	}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
			return nil
		}
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) || strings.Contains(path, n) {
				t.Errorf("%s holds an unsalted hash %s of the secret", path, n)
			}
		}
		return nil
	})
}

// oldParamRecipe is what the key's hash of a parameter was made of before
// salting (runtime's hashString("param", v)): its SHA-256 is the digest to
// look for.
func oldParamRecipe(v string) string {
	return fmt.Sprintf("%d:%s\n%d:%s\n", len("param"), "param", len(v), v)
}
