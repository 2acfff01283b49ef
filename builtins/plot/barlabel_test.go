package plot

import (
	"regexp"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/metric"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// TestBarLabelsSayTheSentencesIndex (issue 52): the label over a
// comparison's bar prints its index as the sentence, the table and the
// verdict's row do (stats.Shown): the quickstart's chart said 9.89 where
// every other place said 9.9.
func TestBarLabelsSayTheSentencesIndex(t *testing.T) {
	g := startest.MustExec(t, startest.Options{Modules: []runtime.Module{Module(), metric.Module()}}, `
a = [2100.0, 2180.0, 2230.0, 2050.0, 2160.0, 2210.0, 2140.0, 2090.0]
noise = [1.0, 1.3, 0.75, 1.1, 0.9, 1.25, 0.8, 1.05]
p99 = compare(a, [x * 0.0989 * n for x, n in zip(a, noise)], better = "lower", name = "p99_ms")
cpu = compare(a, [x * 0.001234 * n for x, n in zip(a, noise)], better = "lower", name = "cpu_ms")
rps = compare(a, [x * 14.948 * n for x, n in zip(a, noise)], better = "higher", name = "rps")
fig = plot.bars([p99, cpu, rps])
`)
	svg := string(g["fig"].(interface{ SVG() []byte }).SVG())
	for _, name := range []string{"p99", "cpu", "rps"} {
		c := g[name].(starlark.HasAttrs)
		sv, _ := c.Attr("sentence")
		sentence := string(sv.(starlark.String))
		shown := regexp.MustCompile(`-> B (\S+) `).FindStringSubmatch(sentence)[1]
		if !strings.Contains(svg, ">"+shown+" IMPROVES<") {
			t.Errorf("%s: the sentence says %s; the chart's labels: %q", name, shown, regexp.MustCompile(`>[^<>]*IMPROVES<`).FindAllString(svg, -1))
		}
	}
}
