package metric

import (
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// TestEquivalenceRecordsItsOwnMethod: the provenance of an equivalence
// cell named compare's statistical method ("4: index = ratio of geometric
// means ...") as its input, a method it does not use (issue 33).
func TestEquivalenceRecordsItsOwnMethod(t *testing.T) {
	c := &runtime.Cell{Name: "equivalence"}
	startest.MustExec(t, startest.Options{Cell: c, Modules: testModules()}, `equivalent({"q1": 1, "q2": 2}, {"q1": 1, "q2": 2})`)
	var methods []string
	for _, in := range c.Inputs() {
		if in.Kind == "method" {
			methods = append(methods, in.Name+": "+in.Hash)
		}
	}
	if len(methods) != 1 || !strings.HasPrefix(methods[0], "equivalent: ") || strings.Contains(methods[0], "geometric") {
		t.Errorf("method inputs of an equivalence cell = %q, want one naming how answers are compared", methods)
	}
}
