package runtime

import (
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/hostinfo"
	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/redact"
)

// Record assembles the notebook's record from the cells' states.
func (e *Engine) Record() *record.Record {
	r := &record.Record{
		Title:    redact.String(e.title()),
		Path:     e.NB.Path,
		Rendered: time.Now(),
		Warnings: redactAll(e.Warnings),
		Prov:     e.provenance(),
	}
	for _, c := range e.NB.Cells {
		src, whole := shownSource(c.Name, e.shownBody(c), c.Markdown)
		rc := record.Cell{Name: c.Name, Markdown: c.Markdown, Source: src, Line: c.Line}
		if st := e.runs[c]; st != nil {
			e.fillCell(&rc, st)
		} else if !c.Markdown {
			rc.Status = StatusNever
		}
		if whole != nil {
			rc.Outputs = append([]starlark.Value{whole}, rc.Outputs...)
		}
		r.Cells = append(r.Cells, rc)
	}
	if v := e.verdict(); v != nil {
		r.Verdict, _ = redact.Value(v)
	}
	e.finishRecord(r)
	return r
}

func (e *Engine) fillCell(rc *record.Cell, st *CellRun) {
	rc.Status, rc.Why = st.Status, st.Why
	rc.Reads, rc.Defines = st.Def.Reads, st.Def.Defines
	rc.Duration, rc.ComputedAt = st.duration, st.started
	rc.Host, rc.Load1 = st.host.Name, st.host.Load[0]
	rc.Outputs = redactOutputs(st.outputs)
	rc.Warnings = redactAll(st.warnings)
	if st.Err != nil {
		rc.Error = redact.String(st.Err.Error())
		rc.Trace = redact.String(st.Trace)
	}
	for _, in := range st.inputs {
		rc.Inputs = append(rc.Inputs, record.Input{Kind: in.Kind, Name: redact.String(in.Name), Hash: in.Hash})
	}
	for i, out := range rc.Outputs {
		rc.Outputs[i] = shown(rc.Name, i+1, out)
	}
}

// title is the first Markdown heading, else the file name.
func (e *Engine) title() string {
	for _, c := range e.NB.Cells {
		if !c.Markdown {
			continue
		}
		for _, line := range strings.Split(c.Body, "\n") {
			if t, ok := strings.CutPrefix(strings.TrimSpace(line), "# "); ok {
				return strings.TrimSpace(t)
			}
		}
	}
	return strings.TrimSuffix(filepath.Base(e.NB.Path), filepath.Ext(e.NB.Path))
}

// verdict finds the notebook's verdict(...) value: the last one shown or
// defined, in cell order.
func (e *Engine) verdict() starlark.Value {
	var found starlark.Value
	for _, c := range e.g.order {
		st := e.runs[c]
		if st == nil {
			continue
		}
		for _, out := range st.outputs {
			if out.Type() == "verdict" {
				found = out
			}
		}
	}
	return found
}

func (e *Engine) provenance() record.Provenance {
	h := hostinfo.Read()
	p := record.Provenance{
		Host:        record.Host{Name: h.Name, CPU: h.CPU, Cores: h.Cores, MemBytes: h.MemBytes, Kernel: h.Kernel, Load: h.Load},
		GoVersion:   goruntime.Version(),
		Version:     e.opts.Version,
		Params:      ShownParams(e.opts.Params),
		CommandLine: strings.Join(redact.Args(e.opts.Args), " "),
	}
	dir := filepath.Dir(e.NB.Path)
	if out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output(); err == nil {
		p.GitRev = strings.TrimSpace(string(out))
		status, _ := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
		p.GitDirty = len(strings.TrimSpace(string(status))) > 0
	}
	return p
}

// redactOutputs hides the secrets of a cell's outputs (printed text,
// displayed values, tables) on their way to a record or the cache.
func redactOutputs(outs []starlark.Value) []starlark.Value {
	red := make([]starlark.Value, len(outs))
	for i, out := range outs {
		red[i], _ = redact.Value(out)
	}
	return red
}

func redactAll(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = redact.String(s)
	}
	return out
}

// Redacted hides secrets in printed text.
func (p Printed) Redacted() (starlark.Value, bool) {
	s := redact.String(string(p))
	return Printed(s), s != string(p)
}
