package browsertest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var evalOut = regexp.MustCompile(`(?s)<pre id="bb-eval">(.*?)</pre>`)

// Eval opens page (which has a <head>) in headless Chromium, runs body, the
// body of a JavaScript function returning a string, once the page has
// loaded, and returns what it returned: for a test that reads what a
// reader's browser shows (a frame's title, an element's drawn width). The
// page's own Content-Security-Policy is kept, allowing only the injected
// script.
func Eval(t *testing.T, page, body string) string {
	t.Helper()
	return EvalAt(t, page, 1280, body)
}

// EvalAt is Eval in a window width px wide.
func EvalAt(t *testing.T, page string, width int, body string) string {
	t.Helper()
	script := "<script>window.addEventListener(\"load\", function () { var r; try { r = String((function () {\n" + body +
		"\n})()); } catch (e) { r = \"error: \" + e; } var pre = document.createElement(\"pre\"); pre.id = \"bb-eval\"; pre.textContent = r; document.body.appendChild(pre); });</script>\n"
	test := strings.Replace(page, "default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';", 1)
	test = strings.Replace(test, "<head>\n", "<head>\n"+script, 1)
	file := filepath.Join(t.TempDir(), "eval.html")
	if err := os.WriteFile(file, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, logs := chromium(t, file, "--virtual-time-budget=5000", fmt.Sprintf("--window-size=%d,2000", width), "--dump-dom")
	m := evalOut.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the script did not report (page did not load?)\nstderr:\n%s", logs)
	}
	return htmlUnescape(m[1])
}
