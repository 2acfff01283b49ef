package nbfuzz

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/display"
	"github.com/benchbook/benchbook/builtins/metric"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// runBound is how long one input may run (both runs and the renders); each
// run's context ends after cellBound, which cancels the cell running then,
// so only a hang outside Starlark's reach (a builtin, the engine, a render)
// passes runBound.
// Under -race, whose instrumented code runs 5-10x slower (a seed's 1.4 MB
// of Markdown took 20 s there at load 10, 2 s without), runBound is 60 s.
const cellBound = time.Second

var runBound = map[bool]time.Duration{false: 20 * time.Second, true: 60 * time.Second}[timing.Race]

// FuzzNotebook runs whole notebooks. Seeds: each notebook of the project,
// each of its cells alone, random recombinations of cells and mutations of
// them, and a few hostile cells (issue 25's list, and issue 48's deep JSON,
// str and md). Each record is rendered as HTML, JSON and Markdown.
func FuzzNotebook(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 1<<16 {
			return
		}
		done := make(chan error, 1)
		dir := t.TempDir()
		go func() { done <- runTwice(dir, src) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(runBound):
			t.Fatalf("the notebook still runs after %v:\n%s", runBound, src)
		}
	})
}

// runTwice parses and runs src twice (the second run reads the cache the
// first wrote) and renders each record; a parse error ends it quietly,
// unless src holds a chain too long to parse, which must be refused.
func runTwice(dir string, src []byte) error {
	path := filepath.Join(dir, "nb.star")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		return err
	}
	for range 2 {
		nb, err := runtime.ParseFile(path)
		if err := checkRefusal(src, err); err != nil {
			return err
		}
		if err != nil {
			return nil
		}
		if err := runOnce(nb, filepath.Join(dir, "cache")); err != nil {
			return err
		}
	}
	return nil
}

// maxChain is the longest chain the runtime takes (runtime/chains.go),
// restated: the oracle must not share the runtime's figure by reference.
const maxChain = 1000

// chainLinks are links whose run of more than maxChain in code (not in a
// string or a comment) makes a chain the parser must refuse.
var chainLinks = []string{"[0]", ".a", "()", " + 1"}

// overlongChain finds in src, by plain text search, the first run of more
// than maxChain copies of one link on a line with no quote or '#' before
// it (so surely code), and returns its line.
func overlongChain(src []byte) (line int, ok bool) {
	first := -1
	for _, link := range chainLinks {
		i := bytes.Index(src, []byte(strings.Repeat(link, maxChain+1)))
		if i < 0 {
			continue
		}
		start := bytes.LastIndexByte(src[:i], '\n') + 1
		if bytes.ContainsAny(src[start:i], "\"'#") {
			continue
		}
		if first < 0 || i < first {
			first = i
		}
	}
	if first < 0 {
		return 0, false
	}
	return 1 + bytes.Count(src[:first], []byte("\n")), true
}

// checkRefusal: a notebook with an overlong chain is refused as excessive
// nesting at nb.star:LINE:COL, never parsed (its tree would be as deep as
// the chain is long) nor a crash. LINE is the chain's, or an earlier one's
// (an overlong chain of links the search does not know); an error of
// another kind on an earlier line stops the parse before the chain.
func checkRefusal(src []byte, parseErr error) error {
	line, ok := overlongChain(src)
	if !ok {
		return nil
	}
	if parseErr == nil {
		return fmt.Errorf("a chain of more than %d links on line %d was parsed", maxChain, line)
	}
	// An error on an earlier line (another cell's syntax) stops the parse
	// first: the chain was never parsed either.
	if m := position.FindStringSubmatch(parseErr.Error()); m != nil && atoi(m[1]) < line {
		return nil
	}
	m := refusal.FindStringSubmatch(parseErr.Error())
	if m == nil || atoi(m[1]) > line {
		return fmt.Errorf("a chain of more than %d links on line %d: %v, want \"nb.star:%d:COL: excessive nesting\"", maxChain, line, parseErr, line)
	}
	return nil
}

var (
	refusal  = regexp.MustCompile(`nb\.star:(\d+):\d+: excessive nesting`)
	position = regexp.MustCompile(`nb\.star:(\d+):\d+:`)
)

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// secretLines are the hostile secret cells' lines, each with the secrets
// it plants: when a notebook holds such a line whole, no record and no
// cache file may hold them. Issue 34 added the names free-text redaction
// missed: a password-named param() at its default, hyphenated keys,
// Authorization and Cookie values, values under auth, credentials, cookie.
var secretLines = []struct {
	line    string
	secrets []string
}{
	{`x = {"password": "pwFuzzSecret9", "url": "postgres://u:pwFuzzSecret9@h/db"}`, []string{"pwFuzzSecret9"}},
	{`pw = param("db_password", "pwFuzzDefault7")`, []string{"pwFuzzDefault7"}},
	{`h = {"X-Api-Key": "pwFuzzHyph7", "api-key": "pwFuzzHyph8"}`, []string{"pwFuzzHyph7", "pwFuzzHyph8"}},
	{`hd = {"Authorization": "Bearer pwFuzzAuth7", "Cookie": "sid=pwFuzzCook7"}`, []string{"pwFuzzAuth7", "pwFuzzCook7"}},
	{`u = {"auth": ("u", "pwFuzzUnder7"), "credentials": "pwFuzzCred7", "cookie": "pwFuzzCook8"}`, []string{"pwFuzzUnder7", "pwFuzzCred7", "pwFuzzCook8"}},
}

func runOnce(nb *runtime.Notebook, cache string) error {
	ctx, cancel := context.WithTimeout(context.Background(), cellBound)
	defer cancel()
	e, err := runtime.Open(ctx, nb, runtime.Options{CacheDir: cache, Stderr: io.Discard, Modules: []runtime.Module{display.Module(), metric.Module()}})
	if err != nil {
		return nil // a notebook the engine refuses (a parameter, a cycle) is fine
	}
	defer e.Close()
	e.Run(true)
	rec := e.Record()
	for _, c := range rec.Cells {
		if strings.Contains(c.Error, "panic") || strings.Contains(c.Error, "goroutine ") {
			return fmt.Errorf("cell %s: a Go panic reached the record: %s", c.Name, c.Error)
		}
	}
	var html, js bytes.Buffer
	if err := record.HTML(&html, rec); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	if err := record.JSON(&js, rec); err != nil {
		return err
	}
	md := filepath.Join(filepath.Dir(cache), "nb.md")
	if err := record.Markdown(rec, md); err != nil {
		return fmt.Errorf("render md: %w", err)
	}
	if mdText, err := os.ReadFile(md); err == nil && scriptLink.Match(mdFence.ReplaceAll(mdText, []byte("\n"))) {
		return fmt.Errorf("a script link reached the .md record:\n%s", mdText)
	}
	var planted []string
	for _, sl := range secretLines {
		if holdsCell(nb, sl.line) {
			planted = append(planted, sl.secrets...)
		}
	}
	for _, secret := range planted {
		if bytes.Contains(html.Bytes(), []byte(secret)) || bytes.Contains(js.Bytes(), []byte(secret)) {
			return fmt.Errorf("the secret %s reached the record", secret)
		}
	}
	if len(planted) == 0 {
		return nil
	}
	return filepath.WalkDir(cache, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		for _, secret := range planted {
			if err == nil && (bytes.Contains(data, []byte(secret)) || holdsBase64(data, secret)) {
				return fmt.Errorf("the secret %s reached the cache: %s", secret, path)
			}
		}
		return err
	})
}

// holdsBase64 finds s inside base64 text (an entry's values): s starts at
// one of three alignments, and the middle of each encoding depends on s
// alone.
func holdsBase64(data []byte, s string) bool {
	for shift := range 3 {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, shift), s...))
		from := 0
		if shift > 0 {
			from = 4
		}
		if mid := enc[from : len(enc)-4]; len(mid) >= 8 && bytes.Contains(data, []byte(mid)) {
			return true
		}
	}
	return false
}

// holdsCell says whether a cell of nb has line as one of its lines.
func holdsCell(nb *runtime.Notebook, line string) bool {
	for _, c := range nb.Cells {
		for _, l := range strings.Split(c.Body, "\n") {
			if strings.TrimSpace(l) == line {
				return true
			}
		}
	}
	return false
}

// seeds are whole notebooks from the project's notebooks and hostile
// cells, recombined with a fixed seed so the corpus is reproducible.
func seeds(tb testing.TB) [][]byte {
	files, _ := filepath.Glob("../../notebooks/*.star")
	var cells []string
	var out [][]byte
	for _, p := range files {
		src, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, src)
		cells = append(cells, split(string(src))...)
	}
	cells = append(cells, hostile...)
	for _, c := range cells {
		out = append(out, []byte(c))
	}
	rng := rand.New(rand.NewPCG(25, 1))
	for range 40 {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteString(mutate(rng, cells[rng.IntN(len(cells))]))
		}
		out = append(out, []byte(b.String()))
	}
	return out
}

// split cuts a notebook at its "# %%" lines, each cell keeping its header.
func split(src string) []string {
	var cells []string
	for _, part := range strings.Split(src, "\n# %%") {
		if !strings.HasPrefix(part, "# %%") {
			part = "# %%" + part
		}
		cells = append(cells, strings.TrimRight(part, "\n")+"\n")
	}
	return cells
}

// mutate drops, duplicates or swaps a line of a cell, or leaves it.
func mutate(rng *rand.Rand, cell string) string {
	lines := strings.Split(cell, "\n")
	if len(lines) < 3 {
		return cell
	}
	i := 1 + rng.IntN(len(lines)-2)
	switch rng.IntN(4) {
	case 0:
		lines = append(lines[:i], lines[i+1:]...)
	case 1:
		lines = append(lines[:i+1], lines[i:]...)
	case 2:
		lines[i], lines[i+1] = lines[i+1], lines[i]
	}
	return strings.Join(lines, "\n")
}

// scriptLink is an inline Markdown link or image to a script whose '[' is
// not escaped, by plain text search outside fenced blocks (mdFence), where
// the .md record keeps the code: the record defuses the others.
var mdFence = regexp.MustCompile("(?s)\n```+[a-z]*\n.*?\n```+\n")

var scriptLink = regexp.MustCompile(`(?i)(^|[^\\])\[[^\[\]\n]*\]\(\s*<?\s*javascript:`)

// hostile cells: what issue 25 found and its neighbours.
var hostile = []string{
	"# %% deep\nx = []\nfor i in range(5000):\n    x = [x]\nx\n",
	"# %% wide\nx = [\"y\" * 1000] * 1000\nlen(x)\n",
	"# %% cyc\nx = []\nx.append(x)\n",
	"# %% dev\nx = file(\"/dev/zero\")\n",
	"# %% dir\nx = file(\".\")\n",
	"# %% rec\ndef f(n):\n    return f(n + 1)\nx = f(0)\n",
	"# %% spin\nn = 0\nfor i in range(10000000):\n    n += i\nn\n",
	"# %% memo\nx = memo(\"k\", lambda: [1, 2, 3])\nx\n",
	"# %% par\np = param(\"n\", 3)\np\n",
	"# %% a\nx = 1\n\n# %% b\ny = x + 1\n\n# %% c\nx = 2\n",
	"# %% [markdown]\n# # title <script>alert(1)</script>\n",
	"# %% nul\nx = \"\x00\"\n",
	"# %% secret\n" + secretLines[0].line + "\nx\n",
	"# %% pwdefault\n" + secretLines[1].line + "\npw\n",
	"# %% hyphen\n" + secretLines[2].line + "\nprint(h[\"api-key\"])\nh\n",
	"# %% headers\n" + secretLines[3].line + "\nprint(\"Authorization: \" + hd[\"Authorization\"])\nhd\n",
	"# %% under\n" + secretLines[4].line + "\nprint(u[\"auth\"][1], u)\nu\n",
	// Chains the parser builds in a loop, into trees as deep as they are
	// long: refused past 1000 links (checkRefusal), run below. Under the
	// fuzzer's 64 KiB bound, so the seeds run.
	"# %% chain\nx = [0]\ny = x" + strings.Repeat("[0]", 1_001) + "\n",
	"# %% dots\nx = struct(a = 1)\ny = x" + strings.Repeat(".a", 5_000) + "\n",
	"# %% calls\ny = print" + strings.Repeat("()", 3_000) + "\n",
	"# %% sum\ny = 1" + strings.Repeat(" + 1", 5_000) + "\n",
	"# %% late\nx = 1\n\n# %% later\nz = 2\ny = x" + strings.Repeat("[0]", 2_000) + "\n",
	"# %% shortchain\nx = [[0]]\ny = x" + strings.Repeat("[-1:][0]", 499) + "\ny\n",
	// Issue 48: recursions in Go that a Starlark thread's cancellation
	// does not reach (a crash past Go's stack, minutes deaf to a signal),
	// and what the records must not keep.
	"# %% jdeep\ns = \"[\" * 3000000 + \"]\" * 3000000\nv = json.decode(s)\n",
	"# %% jobj\nv = json.decode('{\"a\":' * 500000 + '1' + '}' * 500000)\n",
	"# %% jenc\ndef _f():\n    d = {}\n    c = d\n    for i in range(200000):\n        n = {}\n        c[\"k\"] = n\n        c = n\n    return json.encode(d)\ns = _f()\n",
	"# %% sdeep\n_l = []\nfor i in range(200000):\n    _l = [_l]\ns = str(_l)\nprint(_l)\n",
	"# %% rdeep\n_d = {}\nfor i in range(200000):\n    _d = {\"k\": _d}\nr = repr(_d)\n",
	"# %% dag\n_x = []\nfor i in range(100):\n    _x = [_x, _x]\ns = str(_x)\n",
	"# %% mdeep\nmd(\">\" * 200000 + \" hi\")\n",
	"# %% mlist\nmd(\"\\n\".join([\"  \" * i + \"- x\" for i in range(1200)]))\n",
	"# %% mjs\nmd(\"[x](javascript:alert(1)) ![i](JaVaScRiPt:alert(2)) <javascript:alert(3)>\")\n",
}
