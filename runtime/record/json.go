package record

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/starjson"
)

// JSON writes r for tools: every cell with its status, source, outputs
// (their text, and a JSON summary where the value offers one) and the
// provenance.
func JSON(w io.Writer, r *Record) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(buildJSON(r)); err != nil {
		return fmt.Errorf("record: render json: %w", err)
	}
	return nil
}

type jsonRecord struct {
	Title    string     `json:"title"`
	Path     string     `json:"path"`
	Rendered *time.Time `json:"rendered,omitempty"`
	Summary  string     `json:"summary"`
	Verdict  *jsonValue `json:"verdict,omitempty"`
	Warnings []string   `json:"warnings,omitempty"`
	Cells    []jsonCell `json:"cells"`
	Named    []jsonVar  `json:"named,omitempty"`
	Prov     jsonProv   `json:"provenance"`
}

// jsonVar is a value a cell bound to a global name (Record.Named).
type jsonVar struct {
	Cell string `json:"cell"`
	Name string `json:"name"`
	jsonValue
}

type jsonCell struct {
	Name       string      `json:"name,omitempty"`
	Markdown   bool        `json:"markdown,omitempty"`
	Source     string      `json:"source"`
	Line       int         `json:"line,omitempty"`
	Status     Status      `json:"status,omitempty"`
	Why        string      `json:"why,omitempty"`
	Reads      []string    `json:"reads,omitempty"`
	Defines    []string    `json:"defines,omitempty"`
	Seconds    float64     `json:"duration_s,omitempty"`
	ComputedAt *time.Time  `json:"computed_at,omitempty"`
	Host       string      `json:"host,omitempty"`
	Load1      float64     `json:"load1,omitempty"`
	Outputs    []jsonValue `json:"outputs,omitempty"`
	Error      string      `json:"error,omitempty"`
	Trace      string      `json:"trace,omitempty"`
	Warnings   []string    `json:"warnings,omitempty"`
	Inputs     []jsonInput `json:"inputs,omitempty"`
}

// jsonValue is an output: its Starlark type, its text, and its JSON
// summary when it has one (JSONer, or plain Starlark data).
type jsonValue struct {
	Type  string `json:"type"`
	Text  string `json:"text,omitempty"`
	Value any    `json:"value,omitempty"`
}

type jsonInput struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	Hash string `json:"hash"`
}

type jsonProv struct {
	Host        jsonHost          `json:"host"`
	GoVersion   string            `json:"go_version,omitempty"`
	Version     string            `json:"version,omitempty"`
	GitRev      string            `json:"git_rev,omitempty"`
	GitDirty    bool              `json:"git_dirty,omitempty"`
	Params      map[string]string `json:"params,omitempty"`
	CommandLine string            `json:"command_line,omitempty"`
}

type jsonHost struct {
	Name     string     `json:"name,omitempty"`
	CPU      string     `json:"cpu,omitempty"`
	Cores    int        `json:"cores,omitempty"`
	MemBytes uint64     `json:"mem_bytes,omitempty"`
	Kernel   string     `json:"kernel,omitempty"`
	Load     [3]float64 `json:"load"`
}

func buildJSON(r *Record) jsonRecord {
	p, h := r.Prov, r.Prov.Host
	out := jsonRecord{
		Title: r.Title, Path: r.Path, Rendered: timePtr(r.Rendered),
		Summary: summary(r.Cells), Warnings: r.Warnings,
		Prov: jsonProv{
			Host:      jsonHost{Name: h.Name, CPU: h.CPU, Cores: h.Cores, MemBytes: h.MemBytes, Kernel: h.Kernel, Load: h.Load},
			GoVersion: p.GoVersion, Version: p.Version, GitRev: p.GitRev, GitDirty: p.GitDirty,
			Params: p.Params, CommandLine: p.CommandLine,
		},
		Cells: make([]jsonCell, 0, len(r.Cells)),
	}
	if r.Verdict != nil {
		v := jsonOf(r.Verdict)
		out.Verdict = &v
	}
	for _, c := range r.Cells {
		out.Cells = append(out.Cells, jsonCellOf(c))
	}
	for _, n := range r.Named {
		out.Named = append(out.Named, jsonVar{Cell: n.Cell, Name: n.Name, jsonValue: jsonOf(n.Value)})
	}
	return out
}

func jsonCellOf(c Cell) jsonCell {
	jc := jsonCell{
		Name: c.Name, Markdown: c.Markdown, Source: c.Source, Line: c.Line,
		Status: c.Status, Why: c.Why, Reads: c.Reads, Defines: c.Defines,
		Seconds: c.Duration.Seconds(), ComputedAt: timePtr(c.ComputedAt),
		Host: c.Host, Load1: finite(c.Load1), Error: c.Error, Trace: c.Trace, Warnings: c.Warnings,
	}
	for _, v := range c.Outputs {
		if v != nil {
			jc.Outputs = append(jc.Outputs, jsonOf(v))
		}
	}
	for _, in := range c.Inputs {
		jc.Inputs = append(jc.Inputs, jsonInput(in))
	}
	return jc
}

// jsonOf summarises a value; a summary that cannot be encoded is dropped and
// the text stays. The summary is starjson's: a JSONer's own, or the value's
// data (a host value without one has its text alone).
func jsonOf(v starlark.Value) (out jsonValue) {
	out = jsonValue{Type: v.Type()}
	defer func() {
		if p := recover(); p != nil {
			out.Value = nil
			out.Text = fmt.Sprintf("cannot display %s value: %v", v.Type(), p)
		}
	}()
	out.Text = valueText(v)
	if summary, err := starjson.Data(v); err == nil && summary != nil {
		if _, err := json.Marshal(summary); err == nil {
			out.Value = summary
		}
	}
	return out
}

// finite maps NaN and infinities, which JSON cannot hold, to 0 for plain
// fields; values keep them in their text.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
