package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// step is one request of a scripted JupyterLab session (cells.py): an
// execution (with the cell id and deleted cells JupyterLab sends, and
// user_expressions), a completion, an inspection or a restart.
type step struct {
	Code            string            `json:"code,omitempty"`
	Cell            string            `json:"cell,omitempty"`
	Deleted         []string          `json:"deleted,omitempty"`
	UserExpressions map[string]string `json:"user_expressions,omitempty"`
	Complete        string            `json:"complete,omitempty"`
	Inspect         string            `json:"inspect,omitempty"`
	Run             []string          `json:"run,omitempty"`
	Restart         bool              `json:"restart,omitempty"`

	// what to expect of an execution
	status, result, line, out, err string
}

// stepResult is what cells.py saw of a step.
type stepResult struct {
	Status, Error, Stdout, Stderr string
	Result                        *string
	StatusLine                    *struct{ Status, Cell string } `json:"status_line"`
	Displays                      []map[string]any               // display_data without a display_id
	Clears                        int                            // clear_output messages
	DisplayIDs                    map[string]struct {
		DisplayData       int      `json:"display_data"`
		UpdateDisplayData int      `json:"update_display_data"`
		Texts             []string // text/plain of each, in order
	} `json:"display_ids"`
	UserExpressions map[string]map[string]any `json:"user_expressions"`
	Seconds         float64                   // from the request to its reply

	Matches []string // complete
	Found   bool     // inspect
	Text    string   // inspect's text/plain
}

// session is what cells.py saw of a session.
type session struct {
	Steps           []stepResult
	KernelPid       int     `json:"kernel_pid"`
	ShutdownSeconds float64 `json:"shutdown_seconds"`
}

// playSession plays steps against a kernel started in dir with env.
func playSession(t *testing.T, env []string, dir string, steps []step) []stepResult {
	t.Helper()
	out, err := runPython(t, env, dir, 3*time.Minute, "cells.py", writeSteps(t, steps))
	if err != nil {
		t.Fatalf("cells.py: %v\n%s", err, out)
	}
	return readSession(t, out, steps).Steps
}

// writeSteps writes the steps file cells.py reads.
func writeSteps(t *testing.T, steps []step) string {
	t.Helper()
	var script strings.Builder
	for _, s := range steps {
		b, _ := json.Marshal(s)
		script.Write(append(b, '\n'))
	}
	path := filepath.Join(t.TempDir(), "steps.jsonl")
	if err := os.WriteFile(path, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readSession reads cells.py's report, its last line of output.
func readSession(t *testing.T, out string, steps []step) session {
	t.Helper()
	var s session
	if err := json.Unmarshal([]byte(lastLines(out, 1)), &s); err != nil || len(s.Steps) != len(steps) {
		t.Fatalf("%d results for %d steps: %v\n%s", len(s.Steps), len(steps), err, out)
	}
	return s
}

// checkSteps compares each execution with what its step expects.
func checkSteps(t *testing.T, steps []step, got []stepResult) {
	t.Helper()
	for i, s := range steps {
		g := got[i]
		if s.Restart || s.Complete != "" || s.Inspect != "" || s.Run != nil {
			continue
		}
		want := s.status
		if want == "" {
			want = "ok"
		}
		line := ""
		if g.StatusLine != nil {
			line = g.StatusLine.Status
		}
		result := ""
		if g.Result != nil {
			result = *g.Result
		}
		switch {
		case g.Status != want:
			t.Errorf("step %d (%q in %s): %s %s, want %s", i, s.Code, s.Cell, g.Status, g.Error, want)
		case line != s.line:
			t.Errorf("step %d (%q in %s): status line %q, want %q", i, s.Code, s.Cell, line, s.line)
		case result != s.result:
			t.Errorf("step %d (%q in %s): result %q, want %q", i, s.Code, s.Cell, result, s.result)
		case s.out != "" && !regexp.MustCompile(s.out).MatchString(g.Stdout):
			t.Errorf("step %d (%q in %s): stdout %q, want %s", i, s.Code, s.Cell, g.Stdout, s.out)
		case s.err != "" && !regexp.MustCompile(s.err).MatchString(g.Error):
			t.Errorf("step %d (%q in %s): error %q, want %s", i, s.Code, s.Cell, g.Error, s.err)
		}
	}
}

// A JupyterLab session: cells sent with their ids are the notebook's cells,
// with benchbook run's semantics: an unchanged cell is a hit, an edit makes
// its dependents stale and they rerun, the one-definition rule holds
// across cells (a deleted cell's names are free again), errors point at the
// cell's own line, named and REPL input mix, and a restarted kernel finds
// its cells in the cache.
func TestKernelCellsAreNotebookCells(t *testing.T) {
	env := installKernel(t)
	steps := []step{
		{Code: "base = 40", Cell: "c1", line: "ran"},
		{Code: "answer = base + 2\nanswer", Cell: "c2", line: "ran", result: "42"},
		{Code: "answer = base + 2\nanswer", Cell: "c2", line: "hit", result: "42"},
		{Code: "base = 50", Cell: "c1", line: "ran", out: "stale now: c2"},
		{Code: "answer = base + 2\nanswer", Cell: "c2", line: "ran", result: "52"},
		{Code: "base = 1", Cell: "c3", status: "error", err: `base.*c1.*c3|c3.*c1`},
		{Code: "answer = base + 2\nanswer", Cell: "c2", line: "hit", result: "52"},
		{Code: "base = 1", Cell: "c3", Deleted: []string{"c1"}, line: "ran"},
		{Code: "answer = base + 2\nanswer", Cell: "c2", line: "ran", result: "3"},
		{Code: "# %% doubled\nq = answer * 2\nq", line: "ran", result: "6"},
		{Code: "q + 1", result: "7"},
		{Code: ":deps doubled", out: "doubled reads: answer"},
		{Code: "x = 1\ny = nope + 1", Cell: "c4", status: "error", err: `c4:2:5.*undefined: nope|undefined: nope.*c4:2:5`},
		{Restart: true},
		{Code: "base = 1", Cell: "c3", line: "hit"},
		{Code: "answer = base + 2\nanswer", Cell: "c2", line: "hit", result: "3"},
	}
	checkSteps(t, steps, playSession(t, env, t.TempDir(), steps))
}

// The REPL's commands work in a notebook as at the prompt: :params makes
// the cells reading a parameter stale and :run runs them, :show and
// :run NAME show a cell's outputs as displays, :render writes the record
// beside the notebook Jupyter named (NAME.html in the kernel's working
// directory, where NAME.ipynb is) and says where, :clear clears the
// cell's output. user_expressions are evaluated after the code as
// Jupyter specifies; inspect gives a builtin its doc and a computed value
// its attributes; a secret never reaches an output.
func TestKernelCommands(t *testing.T) {
	dir := t.TempDir()
	env := append(installKernel(t), "JPY_SESSION_NAME="+filepath.Join(dir, "study.ipynb"))
	html := filepath.Join(dir, "study.html")
	const secret = "hunter2-xyzzy"
	steps := []step{
		{Code: "n = param(\"n\", 3)\nn", Cell: "c1", line: "ran", result: "3"},
		{Code: "m = n * 10\nm", Cell: "c2", line: "ran", result: "30"},
		{Code: ":params n=5", out: `(?s)^n=5\nstale now: c1, c2 `},
		{Code: ":run", out: `(?m)^2 cells: 2 ran`},
		{Code: ":show c2", out: `^c2: ran`},
		{Code: ":run c1"},
		{Code: ":params", out: `^n=5\n$`},
		{Code: ":render", out: "^wrote " + regexp.QuoteMeta(html) + ` \(`},
		{Code: ":render other.md", out: `^wrote other.md \(`},
		{Code: ":clear"},
		{Code: "m", result: "50", UserExpressions: map[string]string{"twice": "m * 2", "bad": "nope + 1", "stmt": "x = 1"}},
		{Code: "nope", status: "error", UserExpressions: map[string]string{"twice": "m * 2"}},
		{Code: "t = table([{\"a\": 1, \"b\": 2}])\nt", Cell: "c3", line: "ran", result: "| a | b |\n| ---: | ---: |\n| 1 | 2 |\n"},
		{Inspect: "t"},
		{Inspect: "workload.http"},
		{Inspect: "progress"},
		{Code: "pw = param(\"password\", \"" + secret + "\")\npw", Cell: "c4", line: "live", result: `"xxxxx"`,
			UserExpressions: map[string]string{"pw": "pw"}},
		{Code: "pw", result: `"xxxxx"`},
	}
	got := playSession(t, env, dir, steps)
	checkSteps(t, steps, got)

	if d := got[4].Displays; len(d) != 1 || d[0]["text/plain"] != "50" {
		t.Errorf(":show c2 displayed %v, want its output 50", d)
	}
	if !regexp.MustCompile(`(?m)^ran c1 in `).MatchString(got[5].Stdout) || len(got[5].Displays) != 1 || got[5].Displays[0]["text/plain"] != "5" {
		t.Errorf(":run c1: stdout %q, displays %v: want c1 forced and its output 5 shown", got[5].Stdout, got[5].Displays)
	}
	page, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(page), "c2") {
		t.Errorf(":render wrote no record with the cells at %s: %v", html, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "other.md")); err != nil {
		t.Errorf(":render other.md: %v", err)
	}
	if got[9].Clears != 1 {
		t.Errorf(":clear sent %d clear_output, want 1", got[9].Clears)
	}

	ue := got[10].UserExpressions
	if ue["twice"]["status"] != "ok" || fmt.Sprint(ue["twice"]["data"]) != "map[text/plain:100]" {
		t.Errorf("user expression m * 2: %v", ue["twice"])
	}
	if ue["bad"]["status"] != "error" || !strings.Contains(fmt.Sprint(ue["bad"]["evalue"]), "nope") {
		t.Errorf("user expression nope + 1: %v, want an error naming nope", ue["bad"])
	}
	if ue["stmt"]["status"] != "error" || ue["stmt"]["ename"] != "SyntaxError" {
		t.Errorf("user expression x = 1: %v, want a SyntaxError (no statement)", ue["stmt"])
	}
	if len(got[11].UserExpressions) != 0 {
		t.Errorf("a failed execution answered user_expressions %v, want {}", got[11].UserExpressions)
	}

	for _, c := range []struct {
		step int
		want string
	}{{13, "t: table, defined by cell c3"}, {13, "\nattributes: "}, {14, "workload.http(url, method = \"GET\""}, {15, "progress(label) names the step"}} {
		if s := got[c.step]; !s.Found || !strings.Contains(s.Text, c.want) {
			t.Errorf("inspect %s: %q (found %v), want %q in it", steps[c.step].Inspect, s.Text, s.Found, c.want)
		}
	}
	for _, attr := range []string{"columns", "csv", "rows"} {
		if !strings.Contains(got[13].Text, attr) {
			t.Errorf("inspect t: %q does not list the table's attribute %s", got[13].Text, attr)
		}
	}

	for _, g := range got[16:] {
		if b, _ := json.Marshal(g); strings.Contains(string(b), secret) {
			t.Errorf("the secret reached the outputs: %s", b)
		}
	}
	if fmt.Sprint(got[16].UserExpressions["pw"]["data"]) != `map[text/plain:"xxxxx"]` {
		t.Errorf("user expression pw: %v, want the secret masked", got[16].UserExpressions["pw"])
	}
}

// A completion or an inspection sent while the engine is not open yet
// (another run holds the notebook's cache lock) waits for it, a bounded
// time, and is answered in full once it opens: not found empty, as it
// would be if answered at once.
func TestKernelCompleteWaitsForTheEngine(t *testing.T) {
	dir := t.TempDir() // the notebook Jupyter names is "kernel", its cache .benchbook/kernel
	env := append(installKernel(t), "JPY_SESSION_NAME="+filepath.Join(dir, "kernel.ipynb"))
	out, err := runPython(t, env, dir, 2*time.Minute, "ready.py")
	if err != nil {
		t.Fatalf("ready.py: %v\n%s", err, out)
	}
	var got struct {
		Complete struct {
			Matches      []string
			AfterRelease float64 `json:"after_release"`
		}
		Inspect struct {
			Found        bool
			Data         map[string]string
			AfterRelease float64 `json:"after_release"`
		}
	}
	if err := json.Unmarshal([]byte(lastLines(out, 1)), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("answered %.2fs (complete) and %.2fs (inspect) after the lock was let go", got.Complete.AfterRelease, got.Inspect.AfterRelease)
	if fmt.Sprint(got.Complete.Matches) != "[http]" || got.Complete.AfterRelease < 0 || got.Complete.AfterRelease > readyWait.Seconds() {
		t.Errorf("complete: %+v, want http (workload.ht completed) once the engine opened", got.Complete)
	}
	if !got.Inspect.Found || !strings.Contains(got.Inspect.Data["text/plain"], "workload.http(url") || got.Inspect.AfterRelease < 0 {
		t.Errorf("inspect: %+v, want workload.http's doc once the engine opened", got.Inspect)
	}
}

// A workload's live progress is one display updated in place: a single
// display_data for the cell's status line, then update_display_data a few
// times a second (the workload's terminal rate), ending with the cell's
// outcome; never a stream line per tick, which a notebook would keep as
// thousands of lines.
func TestKernelProgressInPlace(t *testing.T) {
	env := installKernel(t)
	const seconds = 3
	steps := []step{
		{Code: "# %% target\nt = backend.demo(rows = 2000)", line: "live"},
		{Code: fmt.Sprintf("# %%%% load\nr = workload.http(t.url + \"/search?q=t0042\", clients = 2, duration = \"%ds\", warmup = \"0s\")", seconds), line: "ran"},
		{Code: "r.count > 0", result: "True"},
	}
	got := playSession(t, env, t.TempDir(), steps)
	checkSteps(t, steps, got)
	load := got[1]
	if len(load.DisplayIDs) != 1 {
		t.Fatalf("the load cell sent %d displays with an id, want its one status line: %+v", len(load.DisplayIDs), load.DisplayIDs)
	}
	for id, d := range load.DisplayIDs {
		live := 0
		for _, text := range d.Texts {
			if strings.Contains(text, "req/s") {
				live++
			}
		}
		total := d.DisplayData + d.UpdateDisplayData
		t.Logf("%s: %d display_data, %d update_display_data (%d progress lines) over %.1fs", id, d.DisplayData, d.UpdateDisplayData, live, load.Seconds)
		if d.DisplayData != 1 {
			t.Errorf("%s was displayed %d times, want once and then updated", id, d.DisplayData)
		}
		if live < seconds {
			t.Errorf("%d progress lines over a %ds run, want the live line's updates (2 a second)", live, seconds)
		}
		if limit := int(3*load.Seconds) + 3; total > limit {
			t.Errorf("%d messages for the status line over %.1fs, want at most %d (3 a second)", total, load.Seconds, limit)
		}
		if last := d.Texts[len(d.Texts)-1]; !strings.HasPrefix(last, "ran load in ") {
			t.Errorf("the status line ends as %q, want the cell's outcome", last)
		}
	}
	if strings.Contains(load.Stdout+load.Stderr, "req/s") {
		t.Errorf("progress went to a stream: stdout %q, stderr %q", load.Stdout, load.Stderr)
	}
}
