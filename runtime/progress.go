package runtime

import (
	"fmt"
	"sort"
	"strings"

	"github.com/benchbook/benchbook/runtime/record"
)

// paint wraps s in an ANSI colour when colour is on.
func (e *Engine) paint(code, s string) string {
	if !e.opts.Color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

var statusColor = map[Status]string{
	StatusHit: "32", StatusRan: "36", StatusLive: "35", StatusError: "31",
	StatusSkipped: "33", StatusNever: "33",
}

// progress prints one line per cell: status, name, time, reason.
func (e *Engine) progress(st *CellRun) {
	if e.opts.OnCell != nil {
		e.opts.OnCell(st, false)
		return
	}
	dur := ""
	if st.Executed {
		dur = record.FormatDuration(st.duration)
	}
	line := fmt.Sprintf("  %s %-20s %8s  %s", e.paint(statusColor[st.Status], fmt.Sprintf("%-7s", st.Status)), st.Def.Name, dur, st.Why)
	fmt.Fprintln(e.opts.Stderr, strings.TrimRight(line, " "))
	if st.Err != nil {
		fmt.Fprintf(e.opts.Stderr, "%s\n", e.paint("31", indent(st.Err.Error())))
		if st.Trace != "" {
			fmt.Fprintln(e.opts.Stderr, indent(st.Trace))
		}
	}
	for _, w := range st.warnings {
		if st.Executed {
			fmt.Fprintf(e.opts.Stderr, "    warning: %s\n", w)
		}
	}
}

// starting says that a cell starts executing.
func (e *Engine) starting(st *CellRun) {
	if e.opts.OnCell != nil {
		e.opts.OnCell(st, true)
		return
	}
	fmt.Fprintf(e.opts.Stderr, "%s %s\n", e.paint("2", "  ▶ run"), st.Def.Name)
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// checkParams warns about -p parameters that no cell reads: a typo would
// otherwise silently measure the default.
func (e *Engine) checkParams() {
	read := map[string]bool{}
	for _, c := range e.NB.Cells {
		for _, p := range c.Params {
			read[p] = true
		}
	}
	for _, st := range e.runs {
		for _, in := range st.inputs {
			if in.Kind == "param" {
				read[in.Name] = true
			}
		}
	}
	var unused []string
	for name := range e.opts.Params {
		if !read[name] {
			unused = append(unused, name)
		}
	}
	sort.Strings(unused)
	for _, name := range unused {
		e.warn(fmt.Sprintf("parameter %s is not read by any cell (-p %s=...)", name, name))
	}
}

// Summary counts cells by status.
func (e *Engine) Summary() map[Status]int {
	n := map[Status]int{}
	for _, st := range e.runs {
		n[st.Status]++
	}
	return n
}

// Failed reports whether any cell failed or was skipped because of a failure.
func (e *Engine) Failed() bool {
	n := e.Summary()
	return n[StatusError] > 0 || n[StatusSkipped] > 0
}
