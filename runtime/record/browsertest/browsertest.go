// Package browsertest opens a rendered record in headless Chromium, as a
// reader would. It reports what a reader's browser would meet: errors,
// network requests, the on-screen size of every chart. Tests of the record
// and of whole notebooks share it; it skips when Chromium is not installed.
package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// probe is put at the top of the test's copy of the page: it records
// errors, CSP violations and console.error calls from the first moment,
// and after load writes what it measured into the DOM for --dump-dom.
const probe = `<script>
window.__bb = [];
window.addEventListener("error", function (e) { __bb.push("error: " + (e.message || (e.target && (e.target.src || e.target.href)) || "resource")); }, true);
document.addEventListener("securitypolicyviolation", function (e) { __bb.push("csp: " + e.violatedDirective + " " + e.blockedURI); });
(function () { var ce = console.error; console.error = function () { __bb.push("console: " + Array.prototype.join.call(arguments, " ")); ce.apply(console, arguments); }; })();
window.addEventListener("load", function () {
  var svgs = Array.prototype.map.call(document.querySelectorAll("svg"), function (s) { var r = s.getBoundingClientRect(); return [r.width, r.height]; });
  var out = { errors: __bb, svgs: svgs, resources: performance.getEntriesByType("resource").map(function (e) { return e.name; }), load_ms: performance.now() };
  var pre = document.createElement("pre"); pre.id = "bb-probe"; pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
});
</script>
`

// Result is what the probe measured in the page.
type Result struct {
	Errors    []string     `json:"errors"`
	SVGs      [][2]float64 `json:"svgs"`
	Resources []string     `json:"resources"`
	LoadMs    float64      `json:"load_ms"` // page clock at the load event
}

// chromium runs headless Chromium on file with args; it skips the test
// when Chromium is not installed.
func chromium(t *testing.T, file string, args ...string) (stdout, stderr string) {
	t.Helper()
	chromiumPath := needs.Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-extensions", "--host-resolver-rules=MAP * ~NOTFOUND",
		"--enable-logging=stderr", "--v=0", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, chromiumPath, append(append(base, args...), "file://"+file)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return out.String(), errb.String()
}

var probeOut = regexp.MustCompile(`(?s)<pre id="bb-probe">(.*?)</pre>`)

// Check opens page (a record's HTML) in Chromium with a probe injected in a
// copy of it, fails t on page errors, console messages, network requests or
// a chart rendered without size, and returns the measurements.
func Check(t *testing.T, page string) Result {
	t.Helper()
	dom, logs := dumpDOM(t, withScript(page, probe), "probe.html")
	m := probeOut.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("probe did not report (page did not load?)\nstderr:\n%s", logs)
	}
	var res Result
	if err := json.Unmarshal([]byte(htmlUnescape(m[1])), &res); err != nil {
		t.Fatalf("probe output %q: %v", m[1], err)
	}
	if len(res.Errors) > 0 {
		t.Errorf("page errors: %q", res.Errors)
	}
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, ":CONSOLE(") {
			t.Errorf("console message: %s", line)
		}
	}
	if len(res.Resources) > 0 {
		t.Errorf("page requested %q", res.Resources)
	}
	if want := strings.Count(page, "<svg"); len(res.SVGs) != want {
		t.Errorf("svgs in the DOM = %d, in the page %d", len(res.SVGs), want)
	}
	for i, wh := range res.SVGs {
		if wh[0] < 10 || wh[1] < 10 {
			t.Errorf("svg %d rendered at %vx%v", i, wh[0], wh[1])
		}
	}
	return res
}

// Screenshot renders the unmodified page to a PNG for a human to look at.
func Screenshot(t *testing.T, page string) { ScreenshotAs(t, page, "record") }

// ScreenshotAs renders the page at 1280 px wide, as a reviewer's laptop
// shows it, to NAME.png in $BENCHBOOK_SCREENSHOT_DIR (a temporary dir when
// unset), and returns the PNG's path.
func ScreenshotAs(t *testing.T, page, name string) string {
	t.Helper()
	return ScreenshotSized(t, page, name, 1280, 5000)
}

// ScreenshotSized is ScreenshotAs in a window of width x height px: a
// picture of one figure, small enough to keep beside a benchmark's results.
func ScreenshotSized(t *testing.T, page, name string, width, height int) string {
	t.Helper()
	dir := os.Getenv("BENCHBOOK_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	file := filepath.Join(dir, name+".html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(dir, name+".png")
	chromium(t, file, "--virtual-time-budget=3000", "--hide-scrollbars", fmt.Sprintf("--window-size=%d,%d", width, height), "--screenshot="+png)
	info, err := os.Stat(png)
	if err != nil || info.Size() < 10_000 {
		t.Fatalf("screenshot %s missing or blank: %v", png, err)
	}
	t.Logf("screenshot: %s", png)
	return png
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#34;", `"`, "&#39;", "'", "&amp;", "&").Replace(s)
}

// withScript is a test's copy of page with script first in its head and
// inline scripts allowed by its content security policy.
func withScript(page, script string) string {
	test := strings.Replace(page, "default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';", 1)
	if i := strings.Index(test, "<head>\n"); i >= 0 {
		return test[:i+len("<head>\n")] + script + test[i+len("<head>\n"):]
	}
	return script + test
}

// dumpDOM writes html to a file named name, opens it in Chromium and
// returns the DOM after the page loaded, and the browser's log.
func dumpDOM(t *testing.T, html, name string) (dom, logs string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	return chromium(t, file, "--virtual-time-budget=5000", "--window-size=1280,5000", "--dump-dom")
}
