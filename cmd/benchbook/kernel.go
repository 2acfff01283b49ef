package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/jupyter"
	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/redact"
)

func cmdKernel(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	if len(args) > 0 && args[0] == "install" {
		return cmdKernelInstall(ctx, stdout, stderr, args[1:])
	}
	fs := newFlagSet("kernel", "Serves the Jupyter messaging protocol on the sockets of a connection file, as\na Jupyter kernel (Jupyter starts it; 'benchbook kernel install' registers it).\nA code cell headed \"# %% NAME\" (or sent with a cell id, as JupyterLab and VS\nCode do) is a cell of the session's notebook, cached as 'benchbook run' caches\nit; other input is evaluated as at the REPL, and :commands work as there.\nThe notebook's cache is .benchbook/NAME in the working directory, NAME the\nnotebook Jupyter names (JPY_SESSION_NAME) or -name.")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: benchbook kernel -f CONNECTION_FILE [flags]\n       benchbook kernel install [--user | --prefix DIR] [-p k=v ...]\n\n")
		fs.PrintDefaults()
	}
	var nf notebookFlags
	nf.register(fs)
	connFile := fs.String("f", "", "the connection file Jupyter wrote (kernel.json passes {connection_file})")
	name := fs.String("name", "", "the notebook's name, for its cache and record (default: JPY_SESSION_NAME's, else \"kernel\")")
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return usageError{err.Error()}
	}
	if *connFile == "" || fs.NArg() > 0 {
		return usageError{"want -f CONNECTION_FILE and no other argument (see -h)"}
	}
	conn, err := jupyter.ReadConnection(*connFile)
	if err != nil {
		return err
	}
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	ks := newKernelSession(ctx, dir, kernelName(*name), &nf, stderr)
	k := jupyter.New(conn, ks, stderr)
	k.ShowCode = shownCode
	stop := handleKernelSignals(k)
	defer stop()
	go watchParent(k, os.Getppid())
	return k.Run(context.WithoutCancel(ctx))
}

// watchParent shuts the kernel down when the frontend that started it dies
// without a shutdown_request (a killed jupyter console): jupyter_client
// sets JPY_PARENT_PID for that, and ipykernel polls its parent the same
// way. Otherwise the orphan would hold the notebook's cache lock and its
// targets forever.
func watchParent(k *jupyter.Kernel, parent int) {
	if os.Getenv("JPY_PARENT_PID") == "" {
		return
	}
	for range time.Tick(time.Second) {
		if os.Getppid() != parent {
			k.Stop()
			return
		}
	}
}

// handleKernelSignals makes SIGINT an interrupt of the running cell (a
// kernelspec's default interrupt_mode is "signal"), never the kernel's end,
// and SIGTERM a shutdown.
func handleKernelSignals(k *jupyter.Kernel) (stop func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sig := range sigs {
			if sig == syscall.SIGTERM {
				k.Stop()
				go exitAfterGrace(os.Stderr, "kernel still busy %v after SIGTERM: stopped")
				continue
			}
			k.Interrupt()
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(sigs)
		<-done
	}
}

// kernelName is the notebook's name when the kernel is told it (-name, or
// JPY_SESSION_NAME, which JupyterLab and jupyter_server 2 set): "" when not,
// and the kernel finds it from the cells it is sent (kernel_notebook.go).
func kernelName(name string) string {
	if name == "" {
		name = os.Getenv("JPY_SESSION_NAME")
	}
	name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	if name == "." || name == string(filepath.Separator) {
		return ""
	}
	return name
}

// kernelSession is the kernel's language side: one engine over the
// notebook of the cells sent so far, driven through the REPL's session so
// its commands, completion and display are the REPL's own.
//
// The engine is the notebook's own once the kernel knows which notebook it
// serves (named): at once when told (-name, JPY_SESSION_NAME), else from
// the first cell it is sent (settle). Until then a provisional engine over
// a cache of its own (a temporary directory, removed) answers REPL input,
// :commands, completion and inspection, so a kernel never waits for a
// cache it may not need, and never shares one with another notebook.
type kernelSession struct {
	nb     kernelNotebook
	dir    string // the working directory, where the notebook is
	nf     *notebookFlags
	r      *repl
	stdout *kernelStream
	stderr *kernelStream
	notes  *kernelStream // the engine's: progress, notices, outcome lines
	log    io.Writer

	base    context.Context
	ready   chan struct{} // closed when the first engine is open (or failed to)
	openErr error
	named   bool   // r is the notebook's own engine, not the provisional one
	tmp     string // the provisional engine's cache, removed with it
	target  string // the cell being executed, whose status line tells its outcome
	// swept says what the start's sweep removed of a dead benchbook's
	// (its containers); the first execution shows it, once.
	swept string
}

// newKernelSession serves the notebook name in dir ("": found from the
// cells, see settle).
func newKernelSession(ctx context.Context, dir, name string, nf *notebookFlags, log io.Writer) *kernelSession {
	ks := &kernelSession{
		nb:     kernelNotebook{path: filepath.Join(dir, cmp.Or(name, "kernel")+".ipynb")},
		dir:    dir,
		nf:     nf,
		named:  name != "",
		stdout: &kernelStream{name: "stdout", log: log},
		stderr: &kernelStream{name: "stderr", log: log},
		notes:  &kernelStream{name: "stdout", live: true, warnings: "stderr", log: log},
		log:    log,
		base:   context.WithoutCancel(ctx),
		ready:  make(chan struct{}),
	}
	go ks.open()
	return ks
}

// open opens the first engine in the background: the cache's lock may be
// held (a "benchbook run" of the same notebook), and the kernel must answer
// kernel_info meanwhile. The first execution waits for it, and shows the
// wait. A kernel not told its notebook opens the provisional engine, which
// waits for nothing.
func (ks *kernelSession) open() {
	defer close(ks.ready)
	// As run, repl and watch do: what a benchbook killed with its reaper
	// left running goes now, whatever notebook this kernel serves.
	if ks.swept = backend.SweepDead(ks.base); ks.swept != "" {
		fmt.Fprintln(ks.log, ks.swept)
	}
	cacheDir := ks.nf.cacheDir
	if !ks.named {
		tmp, err := os.MkdirTemp("", "benchbook-kernel-")
		if err != nil {
			ks.openErr = fmt.Errorf("kernel: a provisional cache: %w", err)
			return
		}
		ks.tmp, cacheDir = tmp, tmp
	}
	ks.r, ks.openErr = ks.openRepl(ks.base, ks.nb.path, cacheDir, false)
}

// openRepl opens an engine over the notebook at path (nothing in it yet:
// the cells come from the frontend) and the REPL session that drives it.
func (ks *kernelSession) openRepl(ctx context.Context, path, cacheDir string, noWait bool) (*repl, error) {
	nb, err := runtime.Parse(path, nil)
	if err != nil {
		return nil, err
	}
	nf := *ks.nf
	nf.cacheDir = cacheDir
	e, err := openEngine(ctx, nb, &nf, runtime.Options{OnCell: ks.onCell, NoWait: noWait}, redact.Writer(ks.notes))
	if err != nil {
		return nil, err
	}
	e.SetContext(ks.base)
	r := &repl{e: e, path: path, base: ks.base, out: redact.Writer(ks.stdout), errw: redact.Writer(ks.stderr),
		params: copyParams(ks.nf.params), sig: &interrupts{}, omit: map[string]bool{":reload": true, ":quit": true}}
	e.Plan()
	return r, nil
}

func (ks *kernelSession) Info() jupyter.Info {
	return jupyter.Info{
		Implementation:        "benchbook",
		ImplementationVersion: version(),
		Language: jupyter.LanguageInfo{
			Name: "starlark", Version: "", MIMEType: "text/x-python", FileExtension: ".star",
			PygmentsLexer: "python", CodemirrorMode: "python",
		},
		Banner: "benchbook " + version() + ": Starlark investigation notebooks, cached cell by cell.\n" +
			"A cell headed \"# %% NAME\" is a notebook cell; :help lists the commands.",
		HelpLinks: []jupyter.HelpLink{{Text: "benchbook README", URL: "https://github.com/benchbook/benchbook#readme"},
			{Text: "benchbook reference", URL: "https://github.com/benchbook/benchbook/tree/main/docs/reference"}},
	}
}

// Execute runs one input: :commands as at the REPL, a notebook cell through
// the engine (a hit when its key is unchanged), anything else as REPL
// input.
func (ks *kernelSession) Execute(ctx context.Context, req *jupyter.ExecuteRequest, out *jupyter.Publisher) *jupyter.Error {
	for _, s := range []*kernelStream{ks.stdout, ks.stderr, ks.notes} {
		s.attach(out)
		defer s.detach()
	}
	if !ks.isReady() {
		ks.notes.status(redact.String(ks.notes.waiting()), nil)
	}
	select {
	case <-ks.ready:
	case <-ctx.Done():
		return interruptedError()
	}
	if ks.swept != "" && !req.Silent { // a silent execution shows nothing
		fmt.Fprintln(ks.notes, redact.String(ks.swept))
		ks.swept = ""
	}
	if ks.openErr != nil {
		return ks.failure(ks.openErr, "")
	}
	// Cells the user deleted leave the notebook now; the engine sees that
	// with the next notebook it is handed (a cell sent with this request
	// may be the one that defines their names anew).
	dropped := len(req.DeletedCells) > 0 && ks.nb.drop(req.DeletedCells)
	code := req.Code
	c, err := readCell(code, req.CellID)
	if err == nil && !ks.named {
		if f := ks.settle(ctx, code); f != nil {
			return f
		}
	}
	trimmed := strings.TrimSpace(code)
	if dropped && (err != nil || isCommand(trimmed)) {
		if err := ks.reload(); err != nil {
			return ks.failure(err, "")
		}
	}
	r := ks.r
	r.base = ctx
	r.e.SetContext(ctx)
	defer func() {
		r.base = ks.base
		r.e.SetContext(ks.base)
	}()
	switch {
	case trimmed == "":
		return nil
	case isCommand(trimmed):
		return ks.commands(trimmed, out)
	case isHelpQuery(trimmed):
		return ks.page(req, strings.Trim(trimmed, "?"))
	case errors.Is(err, errNotACell):
		return ks.eval(code, out)
	case err != nil:
		return &jupyter.Error{Name: "CellError", Value: err.Error(), Traceback: []string{err.Error()}}
	}
	return ks.cell(c, out)
}

// isCommand: ":cells", or IPython's "%cells" spelling of it.
func isCommand(s string) bool {
	return strings.HasPrefix(s, ":") || strings.HasPrefix(s, "%") && !strings.HasPrefix(s, "%%")
}

// isHelpQuery: IPython's "name?" (or "?name"), which pages the name's
// description.
func isHelpQuery(s string) bool {
	name := strings.Trim(s, "?")
	return name != s && name != "" && nameAt([]rune(name), 0) == name
}

// page answers "name?" with the inspection of name as a pager payload.
func (ks *kernelSession) page(req *jupyter.ExecuteRequest, name string) *jupyter.Error {
	text, ok := ks.describe(name)
	if !ok {
		msg := fmt.Sprintf("%s: no such name (or not computed yet)", name)
		return &jupyter.Error{Name: "NameError", Value: msg, Traceback: []string{msg}}
	}
	req.Payload = append(req.Payload, map[string]any{"source": "page", "data": map[string]any{"text/plain": redact.String(text)}, "start": 0})
	return nil
}

// commands runs each line as a REPL :command.
func (ks *kernelSession) commands(src string, out *jupyter.Publisher) *jupyter.Error {
	ks.r.show = ks.displays(out)
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "%") {
			line = ":" + line[1:]
		}
		fields := strings.Fields(line)
		if fields[0] == ":clear" && len(fields) == 1 {
			out.ClearOutput(false)
			continue
		}
		cmd, ok := replCommands[fields[0]]
		switch {
		case !ok || ks.r.omit[fields[0]]:
			err := fmt.Errorf("unknown command %s (:help lists them)", fields[0])
			return &jupyter.Error{Name: "CommandError", Value: err.Error(), Traceback: []string{err.Error()}}
		case cmd.run == nil:
			continue
		}
		if err := cmd.run(ks.r, fields[1:]); err != nil {
			msg := fmt.Sprintf("%s: %v", fields[0], err)
			return &jupyter.Error{Name: "CommandError", Value: msg, Traceback: []string{msg}}
		}
	}
	return nil
}

// shownCode is a cell's code as the kernel echoes it (execute_input, the
// history): its secrets learned first, as the engine will learn them
// from the notebook, then masked, as a record's listing is.
func shownCode(code string) string {
	runtime.LearnSource(code)
	return redact.String(code)
}

// eval evaluates REPL input against the notebook's globals.
func (ks *kernelSession) eval(code string, out *jupyter.Publisher) *jupyter.Error {
	ks.r.show = ks.results(out, nil)
	err := ks.r.evalInput(code)
	ks.r.warnShadows()
	if err != nil {
		return ks.failure(err, "")
	}
	return nil
}

// cell puts c in the notebook and brings it up to date as the REPL's
// ":run NAME" would without running a cached cell again: an unchanged cell is a hit and its
// outputs are replayed from the cache.
func (ks *kernelSession) cell(c *kernelCell, out *jupyter.Publisher) *jupyter.Error {
	undo, err := ks.nb.put(c)
	if err == nil {
		err = ks.reload()
	}
	if err != nil {
		ks.nb.cells = undo
		return ks.failure(err, "")
	}
	if c.markdown {
		md := redact.String(ks.markdown(c.name))
		out.Display(map[string]any{"text/markdown": record.EscapeRawHTML(md), "text/plain": md}, nil, "")
		return nil
	}
	r := ks.r
	ks.target = c.name
	defer func() { ks.target = "" }()
	ks.notes.rest(redact.String("running " + c.name + " …"))
	var runErr error
	r.interruptible(func() { runErr = r.e.RunCell(c.name, runtime.RunIfStale) })
	st := r.state(c.name)
	if st == nil {
		return ks.failure(runErr, "")
	}
	line := redact.String(statusLine(st))
	meta := map[string]any{"benchbook": cellMeta(st)}
	out.SetReplyMetadata(meta)
	shown := ks.notes.outcome(line, meta, st.Err != nil || st.Status == runtime.StatusSkipped)
	if st.Executed {
		for _, w := range st.Warnings() {
			fmt.Fprintf(r.errw, "warning: %s\n", w)
		}
	}
	ks.results(out, map[string]any{"benchbook": cellMeta(st)})(st.Outputs())
	r.refresh()
	switch {
	case st.Err != nil && !shown: // the error says the outcome, in its first line
		f := ks.failure(st.Err, st.Trace)
		f.Traceback = append([]string{line}, f.Traceback...)
		return f
	case st.Err != nil:
		return ks.failure(st.Err, st.Trace)
	case st.Status == runtime.StatusSkipped:
		return &jupyter.Error{Name: "Skipped", Value: st.Why, Traceback: []string{c.name + ": skipped: " + st.Why}}
	case runErr != nil:
		return ks.failure(runErr, "")
	}
	if stale := r.staleNames(); len(stale) > 0 {
		fmt.Fprintf(r.out, "stale now: %s (:run runs them)\n", strings.Join(stale, ", "))
	}
	return nil
}

// onCell tells the outcome of every cell the engine brings up to date but
// the one executed (its outcome line does): upstream cells computed first,
// every cell of a :run. An upstream cell that starts shows on the status
// line. The outcomes are notices (stdout); an error's message and trace
// go to stderr.
func (ks *kernelSession) onCell(st *runtime.CellRun, started bool) {
	switch {
	case st.Def.Name == ks.target && started:
		ks.notes.rest(redact.String("running " + st.Def.Name + " …"))
		return
	case st.Def.Name == ks.target:
		return
	case started && ks.target != "":
		ks.notes.status(redact.String(fmt.Sprintf("running %s (for %s) …", st.Def.Name, ks.target)), nil)
		return
	case started:
		return
	}
	fmt.Fprintln(redact.Writer(ks.notes), statusLine(st))
	w := ks.r.errw
	if st.Err != nil {
		fmt.Fprintln(w, indent(ks.nb.localize(st.Err.Error())))
		if st.Trace != "" {
			fmt.Fprintln(w, indent(ks.nb.localize(st.Trace)))
		}
	}
	if st.Executed {
		for _, warning := range st.Warnings() {
			fmt.Fprintf(w, "    warning: %s\n", warning)
		}
	}
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// statusLine is a cell's outcome in one line: "ran runs in 41.2s (no entry
// in the cache)", "hit runs: from the cache (computed in 41.2s)".
func statusLine(st *runtime.CellRun) string {
	line := string(st.Status) + " " + st.Def.Name
	d := st.Duration()
	switch {
	case st.Status == runtime.StatusHit:
		line += ": from the cache"
		if d > 0 {
			line += " (computed in " + record.FormatDuration(d) + ")"
		}
		return line
	case st.Executed:
		line += " in " + record.FormatDuration(d)
	}
	if st.Why != "" {
		line += " (" + st.Why + ")"
	}
	return line
}

// cellMeta is the cell's outcome in the metadata of its outputs, for tools
// that read a notebook Jupyter saved (nbclient's, say).
func cellMeta(st *runtime.CellRun) map[string]any {
	return map[string]any{"cell": st.Def.Name, "status": string(st.Status), "why": st.Why,
		"executed": st.Executed, "seconds": st.Duration().Seconds()}
}

// markdown is the text of a Markdown cell, its comment marks removed.
func (ks *kernelSession) markdown(name string) string {
	for _, c := range ks.r.e.NB.Cells {
		if c.Name == name {
			return c.Body
		}
	}
	return ""
}

// reload hands the engine the notebook of the cells sent so far.
func (ks *kernelSession) reload() error {
	nb, err := ks.nb.parse()
	if err != nil {
		return err
	}
	if _, err := ks.r.e.Reload(nb); err != nil {
		return fmt.Errorf("%s", ks.nb.localize(err.Error()))
	}
	return nil
}

// results presents a cell's or an input's outputs: printed text as stdout,
// the last value as the execution's result, the others as displays.
func (ks *kernelSession) results(out *jupyter.Publisher, meta map[string]any) func([]starlark.Value) {
	return func(outs []starlark.Value) {
		last := -1
		for i, v := range outs {
			if _, printed := v.(runtime.Printed); !printed && v != nil && v != starlark.None {
				last = i
			}
		}
		for i, v := range outs {
			switch {
			case v == nil || v == starlark.None:
			case i == last:
				out.Result(redactBundle(jupyter.Bundle(v)), meta)
			default:
				ks.display(out, v, meta)
			}
		}
	}
}

// displays presents every output as a display (the outputs :show and :run
// NAME print).
func (ks *kernelSession) displays(out *jupyter.Publisher) func([]starlark.Value) {
	return func(outs []starlark.Value) {
		for _, v := range outs {
			if v != nil && v != starlark.None {
				ks.display(out, v, nil)
			}
		}
	}
}

func (ks *kernelSession) display(out *jupyter.Publisher, v starlark.Value, meta map[string]any) {
	if p, ok := v.(runtime.Printed); ok {
		out.Stream("stdout", redact.String(string(p)))
		return
	}
	out.Display(redactBundle(jupyter.Bundle(v)), meta, "")
}

// redactBundle hides the secrets in every text of a MIME bundle, as the
// REPL's output and a record do: a saved .ipynb keeps its outputs.
func redactBundle(data map[string]any) map[string]any {
	for mime, v := range data {
		if s, ok := v.(string); ok {
			data[mime] = redact.String(s)
		}
	}
	return data
}

// failure is an error as Jupyter shows it: the message and, for Starlark
// errors, the backtrace, with the cells' own lines.
func (ks *kernelSession) failure(err error, trace string) *jupyter.Error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "interrupted") {
		e := interruptedError()
		e.Value = ks.nb.localize(redact.String(err.Error()))
		e.Traceback = []string{e.Value}
		return e
	}
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		trace = ee.Backtrace()
	}
	msg := ks.nb.localize(redact.String(err.Error()))
	tb := []string{msg}
	if trace != "" && !strings.Contains(msg, trace) {
		tb = append(tb, ks.nb.localize(redact.String(strings.TrimRight(trace, "\n"))))
	}
	return &jupyter.Error{Name: "Error", Value: msg, Traceback: tb}
}

func interruptedError() *jupyter.Error {
	return &jupyter.Error{Name: "KeyboardInterrupt", Value: "interrupted", Traceback: []string{"interrupted: finished cells are cached"}}
}

// Shutdown stops every process and container the notebook started and
// releases the cache.
func (ks *kernelSession) Shutdown() {
	select {
	case <-ks.ready:
	case <-time.After(time.Second):
		return // still waiting for the cache lock: nothing started yet
	}
	if ks.r != nil {
		ks.r.e.Close()
	}
	ks.dropProvisional()
}

// dropProvisional removes the provisional engine's cache.
func (ks *kernelSession) dropProvisional() {
	if ks.tmp != "" {
		os.RemoveAll(ks.tmp)
		ks.tmp = ""
	}
}
