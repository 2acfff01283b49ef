package runtime

import (
	"go.starlark.net/starlark"
)

// progress(label) names the step of an experiment that runs now, for the
// live progress lines of the workloads it starts ("pair 2/4 B"): abab,
// sweep and soak call it before each run, and progress("") when they are
// done. It changes no result and no key.
var progressBuiltin = starlark.NewBuiltin("progress", func(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var label string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &label); err != nil {
		return nil, err
	}
	t.SetLocal(stepKey, label)
	return starlark.None, nil
})

const stepKey = "benchbook.progress-step"

// Step is the experiment's step that progress() named last on this
// thread ("" for none), for a builtin's progress line.
func Step(t *starlark.Thread) string {
	s, _ := t.Local(stepKey).(string)
	return s
}

// SetStep names the step that runs now, as progress(label) does: for a
// design written in Go that runs steps inside another's ("pair 2/4 B
// capacity 9 users, run 3"), which restores the outer step when done.
func SetStep(t *starlark.Thread, label string) { t.SetLocal(stepKey, label) }
