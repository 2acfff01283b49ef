package stdlib_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	e := runWith(t, path, tickModule, func(cancel context.CancelFunc) {
		tick.Lock()
		tick.arms, tick.stopAt, tick.cancel = nil, stopAt, cancel
		tick.Unlock()
	})
	e.Close()
	return e
}

// runWith runs the notebook at path with the stdlib's modules and extra,
// after arm has been given the cancel that plays Ctrl-C; the caller closes
// the engine (the next run of the notebook waits for its lock).
func runWith(t *testing.T, path string, extra runtime.Module, arm func(context.CancelFunc)) *runtime.Engine {
	t.Helper()
	nb, err := runtime.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	arm(cancel)
	e, err := runtime.Open(ctx, nb, runtime.Options{Stdlib: stdlib.FS, Modules: append(modules(), extra)})
	if err != nil {
		t.Fatal(err)
	}
	e.Run(true)
	return e
}

// levelTick counts capacity runs across engine executions; at stopAt it
// cancels the run the way Ctrl-C does.
var levelTick = struct {
	sync.Mutex
	runs   []string
	stopAt int
	cancel context.CancelFunc
}{}

// levelModule gives test_level(arm, users): a run whose p99 is 5 ms a user
// on arm A and 2.5 on arm B (capacity 10 and 20 at p99 <= 50 ms).
var levelModule = runtime.Module{Name: "stdlib_test_levels", Globals: starlark.StringDict{
	"test_level": starlark.NewBuiltin("test_level", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var arm string
		var users int
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "arm", &arm, "users", &users); err != nil {
			return nil, err
		}
		levelTick.Lock()
		defer levelTick.Unlock()
		if len(levelTick.runs) == levelTick.stopAt {
			levelTick.cancel()
			return nil, fmt.Errorf("test_level: %w", context.Canceled)
		}
		levelTick.runs = append(levelTick.runs, fmt.Sprintf("%s%d", arm, users))
		perUser := map[string]float64{"A": 5, "B": 2.5}[arm]
		return starlark.Float(perUser * float64(users)), nil
	}),
}}

const capacityNotebook = `# %% runs
load("@std/abab.star", "abab")
load("@std/capacity.star", "capacity")
def _arm(arm):
    return capacity(lambda n: struct(p99 = test_level(arm, n), users = n), {"p99": 50}, 1, 32)
exp = abab(arms = {"A": None, "B": None}, pairs = 6, run = _arm)

# %% verdict
cmp = compare(exp, metric = "capacity")
`

// TestCapacityResumesInEngine interrupts a two-arm capacity study in the
// middle of its third search and runs the notebook again: the engine's
// checkpoints give back every run measured, the third search resumes at its
// first unmeasured level, each pair keeps its own runs (none served another
// pair's), and the verdict compares the pairs' capacities.
func TestCapacityResumesInEngine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "capacity.star")
	if err := os.WriteFile(path, []byte(capacityNotebook), 0o644); err != nil {
		t.Fatal(err)
	}
	whole := runLevels(t, filepath.Join(t.TempDir(), "whole.star"), -1)
	// Each of the 12 searches (6 pairs, 2 arms) measures its own runs: level
	// 1 once in each, by its step-up.
	for _, first := range []string{"A1", "B1"} {
		if n := strings.Count(" "+strings.Join(whole, " ")+" ", " "+first+" "); n != 6 {
			t.Fatalf("%s measured %d times in 6 pairs: the pairs' searches share runs", first, n)
		}
	}
	perSearch := len(whole) / 12
	stop := 2*perSearch + perSearch/2
	first := runLevels(t, path, stop)
	if len(first) != stop {
		t.Fatalf("interrupted after %d runs, want %d", len(first), stop)
	}
	second := runLevels(t, path, -1)
	if len(first)+len(second) != len(whole) {
		t.Errorf("%d runs before the interrupt and %d after, an uninterrupted study makes %d: runs were measured again or lost",
			len(first), len(second), len(whole))
	}
	if strings.Join(append(first, second...), " ") != strings.Join(whole, " ") {
		t.Errorf("the resumed study measured\n%v\nthe uninterrupted one\n%v", append(first, second...), whole)
	}
}

// runLevels runs the capacity notebook at path, interrupted at stopAt runs
// (-1: never), and returns the runs it measured; a run to the end must
// give the verdict "capacity 10 -> 20 users".
func runLevels(t *testing.T, path string, stopAt int) []string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if err := os.WriteFile(path, []byte(capacityNotebook), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := runWith(t, path, levelModule, func(cancel context.CancelFunc) {
		levelTick.Lock()
		levelTick.runs, levelTick.stopAt, levelTick.cancel = nil, stopAt, cancel
		levelTick.Unlock()
	})
	defer e.Close()
	levelTick.Lock()
	runs := append([]string(nil), levelTick.runs...)
	levelTick.Unlock()
	if stopAt < 0 {
		st := e.CellRun("verdict")
		if st == nil || st.Err != nil {
			t.Fatalf("verdict cell: %+v", st)
		}
		out, err := e.Eval("cmp.sentence")
		if err != nil || len(out) == 0 {
			t.Fatalf("cmp.sentence: %v", err)
		}
		if s, _ := starlark.AsString(out[len(out)-1]); !strings.HasPrefix(s, "capacity 10 -> 20 users; ") {
			t.Errorf("verdict: %s", s)
		}
	}
	return runs
}
