package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/bytesize"
	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/redact"
)

// replCommand is one :command of the REPL.
type replCommand struct {
	args string // argument synopsis for :help
	help string
	run  func(r *repl, args []string) error
}

// replCommands is filled in init, which is unavoidable here: its entries
// refer to :help, which lists replCommands, so an initializer would be an
// initialization cycle.
var replCommands map[string]replCommand

func init() {
	replCommands = map[string]replCommand{
		":cells":  {"", "list cells: status, reads, last duration", (*repl).cmdCells},
		":run":    {"[NAME]", "run cell NAME even if cached, resuming its valid checkpoints (its dependents become stale), or run everything stale", (*repl).cmdRun},
		":rerun":  {"NAME", "run cell NAME from scratch, its checkpoints ignored (as -rerun NAME)", (*repl).cmdRerun},
		":show":   {"NAME", "show a cell's status and outputs", (*repl).cmdShow},
		":deps":   {"NAME", "what a cell reads and which cells depend on it", (*repl).cmdDeps},
		":reload": {"", "reread the notebook file and list the changed cells", (*repl).cmdReload},
		":params": {"[k=v ...]", "set parameters (k= restores the default); no argument lists them", (*repl).cmdParams},
		":render": {"[PATH]", "write the record (.html, .md or .json; default beside the notebook)", (*repl).cmdRender},
		":clear":  {"", "clear the output: the screen (in Jupyter, the cell's output)", (*repl).cmdClear},
		":help":   {"[NAME]", "this list; with NAME, the reference of a builtin, module or :command (:help workload.http)", (*repl).cmdHelp},
		":quit":   {"", "leave the REPL (also Ctrl-D)", nil},
	}
}

func replCommandNames() []string {
	names := make([]string, 0, len(replCommands))
	for name := range replCommands {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// do runs one input; it reports whether the session should end.
func (r *repl) do(src string) (quit bool) {
	if src == "" {
		return false
	}
	if !strings.HasPrefix(src, ":") {
		r.eval(src)
		return false
	}
	fields := strings.Fields(src)
	cmd, ok := replCommands[fields[0]]
	switch {
	case !ok:
		fmt.Fprintf(r.errw, "unknown command %s (:help lists them)\n", fields[0])
	case cmd.run == nil:
		return true
	default:
		if err := cmd.run(r, fields[1:]); err != nil {
			fmt.Fprintf(r.errw, "%s: %v\n", fields[0], err)
		}
	}
	return false
}

// interruptible runs fn with a context Ctrl-C cancels, set on the engine.
func (r *repl) interruptible(fn func()) {
	r.sig.run(r.base, func(ctx context.Context) {
		r.e.SetContext(ctx)
		fn()
	})
	r.e.SetContext(r.base)
}

// eval evaluates Starlark input and prints its outputs, then its error with
// the backtrace.
func (r *repl) eval(src string) {
	if err := r.evalInput(src); err != nil {
		r.printError(err, "")
	}
	r.warnShadows()
}

// evalInput evaluates Starlark input, Ctrl-C cancelling it, and displays
// its outputs; it returns the input's error.
func (r *repl) evalInput(src string) error {
	var outs []starlark.Value
	var err error
	r.interruptible(func() { outs, err = r.e.Eval(src) })
	r.refresh()
	r.display(outs)
	return err
}

// warnShadows says, once per name, that an assignment at the prompt hid a
// notebook global: the REPL now sees its own value, the notebook does not.
func (r *repl) warnShadows() {
	for _, s := range r.e.Shadowed() {
		if r.warned[s.Name] {
			continue
		}
		if r.warned == nil {
			r.warned = map[string]bool{}
		}
		r.warned[s.Name] = true
		fmt.Fprintf(r.errw, "warning: %s is a notebook global (defined in cell %s); from now on this REPL sees the value you assigned, while the notebook, :run and :render keep the cell's\n", s.Name, s.Cell)
	}
}

// display prints values as the record shows them.
func (r *repl) display(outs []starlark.Value) {
	if r.show != nil {
		r.show(outs)
		return
	}
	for _, v := range outs {
		if v == nil || v == starlark.None {
			continue
		}
		text := redact.String(displayText(v, r.color)) // as a record shows them: secrets masked
		fmt.Fprint(r.out, text)
		if !strings.HasSuffix(text, "\n") {
			fmt.Fprintln(r.out)
		}
	}
}

// displayText is a value for the terminal: printed text as printed, values
// with Markdown (tables, runs, md()) as that Markdown rendered for a
// terminal, others as Starlark shows them. A display method that panics is
// reported, not fatal.
func displayText(v starlark.Value, color bool) (text string) {
	defer func() {
		if p := recover(); p != nil {
			text = fmt.Sprintf("(cannot display %s value: %v)", v.Type(), p)
		}
	}()
	switch v := v.(type) {
	case runtime.Printed:
		return string(v)
	case record.Markdowner:
		return markdownForTerminal(v.Markdown(), color)
	}
	return v.String()
}

// printError prints an error and, for Starlark errors, the backtrace.
func (r *repl) printError(err error, trace string) {
	var ee *starlark.EvalError
	switch {
	case errors.As(err, &ee):
		fmt.Fprintln(r.errw, ee.Backtrace())
		return
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(r.errw, "interrupted")
		return
	}
	fmt.Fprintln(r.errw, err)
	if trace != "" {
		fmt.Fprintln(r.errw, strings.TrimRight(trace, "\n"))
	}
}

func (r *repl) cmdCells(args []string) error {
	tw := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tSTATUS\tREADS\tLAST\tWHY")
	for _, st := range r.e.CellRuns() {
		if st.Def == nil || st.Def.Markdown {
			continue
		}
		last := "-"
		if d := st.Duration(); d > 0 {
			last = record.FormatDuration(d)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", st.Def.Name, planStatus(st), join(st.Def.Reads), last, st.Why)
	}
	return tw.Flush()
}

func (r *repl) cmdRun(args []string) error {
	switch len(args) {
	case 0:
		r.interruptible(func() { r.e.Run(true) })
		fmt.Fprintln(r.out, summaryLine(r.e.Summary()))
		return nil
	case 1:
		return r.runOne(args[0], runtime.RunAgain)
	}
	return errors.New("want at most one cell name")
}

func (r *repl) cmdRerun(args []string) error {
	if len(args) != 1 {
		return errors.New("want one cell name")
	}
	return r.runOne(args[0], runtime.RunForced)
}

// runOne runs one cell even if cached (mode says whether its checkpoints
// are reused), shows its outputs and the cells it made stale.
func (r *repl) runOne(name string, mode runtime.RunMode) error {
	if r.def(name) == nil {
		return fmt.Errorf("no code cell %q (:cells lists them)", name)
	}
	var err error
	r.interruptible(func() { err = r.e.RunCell(name, mode) })
	// The engine's progress lines have told the status, the time and any
	// error with its backtrace; what is left to show is the outputs.
	st := r.state(name)
	if st != nil {
		r.display(st.Outputs())
	}
	if err != nil && (st == nil || st.Err == nil) {
		r.printError(err, "")
	}
	r.refresh()
	if stale := r.staleNames(); len(stale) > 0 {
		fmt.Fprintf(r.out, "stale now: %s (:run runs them)\n", strings.Join(stale, ", "))
	}
	return nil
}

func (r *repl) staleNames() []string {
	var names []string
	for _, st := range r.e.CellRuns() {
		if st.Def != nil && st.Status == runtime.StatusStale {
			names = append(names, st.Def.Name)
		}
	}
	return names
}

func (r *repl) cmdShow(args []string) error {
	if len(args) != 1 {
		return errors.New("want one cell name")
	}
	st := r.state(args[0])
	if st == nil {
		return fmt.Errorf("no code cell %q (:cells lists them)", args[0])
	}
	r.showState(st)
	return nil
}

// showState prints a cell's status line, its outputs and its error.
func (r *repl) showState(st *runtime.CellRun) {
	line := fmt.Sprintf("%s: %s", st.Def.Name, st.Status)
	if d := st.Duration(); d > 0 {
		line += " in " + record.FormatDuration(d)
	}
	if st.Why != "" {
		line += " (" + st.Why + ")"
	}
	fmt.Fprintln(r.out, line)
	r.display(st.Outputs())
	if st.Err != nil {
		r.printError(st.Err, st.Trace)
	}
}

// refresh plans the cells that have no state: running one cell (or the
// cells an input reads) leaves the cells after it unplanned. Cells that
// have a state keep it, with its error and trace.
func (r *repl) refresh() {
	if len(r.e.CellRuns()) < len(r.cellNames()) {
		r.e.Plan()
	}
}

func (r *repl) def(name string) *runtime.CellDef {
	for _, c := range r.e.NB.Cells {
		if c.Name == name && !c.Markdown {
			return c
		}
	}
	return nil
}

func (r *repl) state(name string) *runtime.CellRun {
	for _, st := range r.e.CellRuns() {
		if st.Def != nil && st.Def.Name == name && !st.Def.Markdown {
			return st
		}
	}
	return nil
}

func (r *repl) cellNames() []string {
	var names []string
	for _, c := range r.e.NB.Cells {
		if !c.Markdown {
			names = append(names, c.Name)
		}
	}
	return names
}

func (r *repl) cmdDeps(args []string) error {
	if len(args) != 1 {
		return errors.New("want one cell name")
	}
	c := r.def(args[0])
	if c == nil {
		return fmt.Errorf("no code cell %q (:cells lists them)", args[0])
	}
	var reads []string
	for _, name := range c.Reads {
		reads = append(reads, fmt.Sprintf("%s (from %s)", name, r.e.Definer(name)))
	}
	fmt.Fprintf(r.out, "%s reads: %s\n", c.Name, orNone(reads))
	fmt.Fprintf(r.out, "%s defines: %s\n", c.Name, orNone(c.Defines))
	fmt.Fprintf(r.out, "used by: %s\n", orNone(r.e.Dependents(c.Name)))
	return nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}

func (r *repl) cmdReload(args []string) error {
	nb, err := runtime.ParseFile(r.path)
	if err != nil {
		return err
	}
	ed, err := r.e.Reload(nb)
	if err != nil {
		return err
	}
	if len(ed.Changed) == 0 && len(ed.Removed) == 0 {
		fmt.Fprintln(r.out, "no cell changed")
		return nil
	}
	fmt.Fprintln(r.out, describeEdit(ed))
	if stale := r.staleNames(); len(stale) > 0 {
		fmt.Fprintf(r.out, "stale now: %s (:run runs them)\n", strings.Join(stale, ", "))
	}
	return nil
}

func (r *repl) cmdParams(args []string) error {
	if len(args) == 0 {
		r.listParams()
		return nil
	}
	next := copyParams(r.params)
	for _, a := range args {
		name, value, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return fmt.Errorf("want name=value, got %q", a)
		}
		if value == "" {
			delete(next, name)
			continue
		}
		next[name] = value
	}
	r.params = next
	r.e.SetParams(copyParams(next))
	r.e.Plan()
	r.listParams()
	if stale := r.staleNames(); len(stale) > 0 {
		fmt.Fprintf(r.out, "stale now: %s (:run runs them)\n", strings.Join(stale, ", "))
	}
	return nil
}

func (r *repl) listParams() {
	if len(r.params) == 0 {
		fmt.Fprintln(r.out, "no parameters set (every param() takes its default)")
		return
	}
	for _, kv := range sortedPairs(r.params) {
		fmt.Fprintf(r.out, "%s=%s\n", kv[0], kv[1])
	}
}

func sortedPairs(m map[string]string) [][2]string {
	out := make([][2]string, 0, len(m))
	for k, v := range m {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func copyParams(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (r *repl) cmdRender(args []string) error {
	if len(args) > 1 {
		return errors.New("want at most one path")
	}
	dest := outputPath(r.path, "", ".html")
	if len(args) == 1 {
		dest = args[0]
	}
	format := "html"
	switch strings.ToLower(filepath.Ext(dest)) {
	case ".md":
		format = "md"
	case ".json":
		format = "json"
	}
	size, err := writeRecord(r.e.Record(), dest, format)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.out, "wrote %s (%s)\n", dest, bytesize.Format(size))
	return nil
}

// cmdClear clears a terminal's screen; the kernel sends clear_output
// instead.
func (r *repl) cmdClear(args []string) error {
	if len(args) > 0 {
		return errors.New("takes no argument")
	}
	if r.tty {
		fmt.Fprint(r.out, "\033[H\033[2J")
	}
	return nil
}

func (r *repl) cmdHelp(args []string) error {
	if len(args) > 0 {
		return r.helpOn(strings.Join(args, " "))
	}
	tw := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	for _, name := range replCommandNames() {
		if r.omit[name] {
			continue
		}
		c := replCommands[name]
		fmt.Fprintf(tw, "  %s %s\t%s\n", name, c.args, c.help)
	}
	fmt.Fprintln(tw, "  (anything else)\tStarlark, evaluated against the notebook's globals")
	tw.Flush()
	fmt.Fprintln(r.out, "Ctrl-C cancels what is running (a workload keeps what it measured); Ctrl-D exits.")
	return nil
}

// helpOn prints the reference of a builtin, a module or stdlib design
// (benchbook help's text), or the line of a :command.
func (r *repl) helpOn(name string) error {
	if c, ok := replCommands[name]; ok && !r.omit[name] {
		fmt.Fprintf(r.out, "%s %s\n    %s\n", name, c.args, c.help)
		return nil
	}
	ref, err := reference()
	if err != nil {
		return err
	}
	text, ok := ref.help(name)
	if !ok {
		return errors.New(ref.unknown(name))
	}
	fmt.Fprint(r.out, markdownForTerminal(text, r.color))
	return nil
}
