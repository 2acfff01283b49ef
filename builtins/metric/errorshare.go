package metric

import (
	"fmt"
	"slices"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// MaxErrorShare is the largest share of a run's requests that may fail
// before compare refuses the run (issue 33): the req/s of a target that
// fails measures how fast it fails, and its latencies those of the errors.
const MaxErrorShare = 0.01

// checkErrors refuses a run in which more than MaxErrorShare of the
// requests failed, naming the run, its share and the classes, unless
// allow_errors = True (then it is a warning on the comparison).
func (ex *extractor) checkErrors(r starlark.Value, where string) error {
	failed, total, classes := errorShare(r)
	if total <= 0 || float64(failed) <= MaxErrorShare*float64(total) {
		return nil
	}
	what := fmt.Sprintf("%s: %.1f %% of its requests failed (%d of %d%s)", where, 100*float64(failed)/float64(total), failed, total, classes)
	if ex.allowErrors {
		ex.note(what + "; taken anyway (allow_errors = True)")
		return nil
	}
	return fmt.Errorf("compare: %s, more than %g %%: the figures of a failing target measure how fast it fails; compare(..., allow_errors = True) takes it anyway",
		what, 100*MaxErrorShare)
}

// errorShare reads a run's failed requests (errors, a dict by class or a
// number) and how many it decided (intended, else successes plus
// failures). A value without these (a number, a row) has none.
func errorShare(r starlark.Value) (failed, total int64, classes string) {
	var byClass []string
	switch e := starval.Attr(r, "errors").(type) {
	case *starlark.Dict:
		for _, k := range e.Keys() {
			v, _, _ := e.Get(k)
			n, ok := starval.Number(v)
			if !ok || n <= 0 {
				continue
			}
			failed += int64(n)
			name, _ := starlark.AsString(k)
			byClass = append(byClass, fmt.Sprintf("%s %d", name, int64(n)))
		}
	case nil:
		return 0, 0, ""
	default:
		n, ok := starval.Number(e)
		if !ok {
			return 0, 0, ""
		}
		failed = int64(n)
	}
	if n, ok := starval.Number(starval.Attr(r, "intended")); ok && n > 0 {
		total = int64(n)
	} else if n, ok := starval.Number(starval.Attr(r, "count")); ok {
		total = int64(n) + failed
	}
	if len(byClass) > 0 {
		slices.Sort(byClass)
		classes = ": " + strings.Join(byClass, ", ")
	}
	return failed, total, classes
}

// note adds a comparison warning once.
func (ex *extractor) note(line string) {
	if !ex.warnings[line] {
		ex.warnings[line] = true
		ex.list = append(ex.list, line)
	}
}
