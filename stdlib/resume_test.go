package stdlib_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/stdlib"
)

// tick counts runs across engine executions; at stopAt it cancels the run
// the way Ctrl-C does.
var tick = struct {
	sync.Mutex
	arms   []string
	stopAt int
	cancel context.CancelFunc
}{}

// tickModule gives test_tick(arm), a run's rps that counts the runs.
var tickModule = runtime.Module{Name: "stdlib_test", Globals: starlark.StringDict{
	"test_tick": starlark.NewBuiltin("test_tick", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var arm string
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "arm", &arm); err != nil {
			return nil, err
		}
		tick.Lock()
		defer tick.Unlock()
		if len(tick.arms) == tick.stopAt {
			tick.cancel()
			return nil, fmt.Errorf("test_tick: %w", context.Canceled)
		}
		tick.arms = append(tick.arms, arm)
		return starlark.Float(100 + 30*float64(len(arm)-1) + float64(len(tick.arms))), nil
	}),
}}

const resumeNotebook = `# %% runs
load("@std/abab.star", "abab")
exp = abab(arms = {"A": None, "B": None}, pairs = 4, run = lambda arm: struct(rps = test_tick(arm)))

# %% verdict
cmp = compare(exp, metric = "rps")
`

// TestResumeInEngine interrupts a study after two runs and runs the notebook
// again: the engine's memo store gives back runs 1 and 2 and the study
// resumes at run 3.
func TestResumeInEngine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "resume.star")
	if err := os.WriteFile(path, []byte(resumeNotebook), 0o644); err != nil {
		t.Fatal(err)
	}
	first := runNotebook(t, path, 2)
	if !first.Interrupted {
		t.Fatalf("first run not interrupted")
	}
	if got := tickArms(); fmt.Sprint(got) != "[A B]" {
		t.Fatalf("first run measured %v, want [A B]", got)
	}
	second := runNotebook(t, path, -1)
	if second.Interrupted {
		t.Fatalf("second run interrupted")
	}
	if got := tickArms(); fmt.Sprint(got) != "[B A A B B A]" {
		t.Errorf("second run measured %v, want runs 3 to 8: [B A A B B A]", got)
	}
	st := second.CellRun("verdict")
	if st == nil || st.Err != nil {
		t.Fatalf("verdict cell: %+v", st)
	}
}

func tickArms() []string {
	tick.Lock()
	defer tick.Unlock()
	return append([]string(nil), tick.arms...)
}

func runNotebook(t *testing.T, path string, stopAt int) *runtime.Engine {
	t.Helper()
	nb, err := runtime.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tick.Lock()
	tick.arms, tick.stopAt, tick.cancel = nil, stopAt, cancel
	tick.Unlock()
	e, err := runtime.Open(ctx, nb, runtime.Options{Stdlib: stdlib.FS, Modules: append(modules(), tickModule)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.Run(true)
	return e
}
