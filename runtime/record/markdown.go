package record

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/bytesize"
)

// Markdown writes r as GitHub-flavoured Markdown to mdPath, with its figures
// as SVG files in "<base>_files/" beside it, linked as images. Values show
// through Markdowner (text bars, tables) or as fenced text.
func Markdown(r *Record, mdPath string) error {
	base := strings.TrimSuffix(filepath.Base(mdPath), filepath.Ext(mdPath))
	m := &mdWriter{rel: base + "_files", dir: filepath.Join(filepath.Dir(mdPath), base+"_files")}
	m.record(r)
	if err := m.writeFigures(); err != nil {
		return err
	}
	return writeAtomic(mdPath, m.buf.Bytes())
}

// mdWriter accumulates the Markdown text and the figures it links to.
type mdWriter struct {
	buf      bytes.Buffer
	dir, rel string
	figures  []figureFile
}

type figureFile struct {
	name string
	data []byte
}

func (m *mdWriter) printf(format string, args ...any) { fmt.Fprintf(&m.buf, format, args...) }

func (m *mdWriter) record(r *Record) {
	m.printf("# %s\n\n", mdTitle(r.Title))
	if r.Verdict != nil {
		m.printf("%s\n\n", strings.TrimSpace(m.valueInline(r.Verdict))) // it says "Verdict: …" itself
	}
	m.printf("_%s_", mdEscape(summary(r.Cells)))
	if !r.Rendered.IsZero() {
		m.printf(" · rendered %s", fmtTime(r.Rendered))
	}
	if r.Prov.Host.Name != "" {
		m.printf(" on %s", mdEscape(r.Prov.Host.Name))
	}
	m.printf("\n\n")
	for _, w := range r.Warnings {
		m.printf("> ⚠ %s\n\n", mdEscape(w))
	}
	for _, c := range withoutTitleHeading(r.Cells, r.Title) {
		if c.Markdown {
			m.printf("%s\n\n", strings.TrimSpace(EscapeRawHTML(c.Source)))
			continue
		}
		m.cell(c, r.Prov.Host.Name)
	}
	m.provenance(r)
}

func (m *mdWriter) cell(c Cell, host string) {
	status := c.Status
	if status == "" {
		status = StatusNever
	}
	m.printf("#### %s · %s", codeSpan(c.Name), status)
	if !c.ComputedAt.IsZero() {
		m.printf(" · %s", FormatDuration(c.Duration))
	}
	m.printf("\n\n")
	var meta []string
	if c.Why != "" {
		meta = append(meta, mdEscape(c.Why))
	}
	if !c.ComputedAt.IsZero() {
		when := "computed " + fmtTime(c.ComputedAt)
		if c.Host != "" {
			when += " on " + mdEscape(c.Host)
		}
		if c.Load1 > 0 {
			when += fmt.Sprintf(" · load %.2f", c.Load1)
		}
		meta = append(meta, when)
	}
	if c.Host != "" && host != "" && c.Host != host {
		meta = append(meta, "**⚠ not this host: a cached measurement from another machine**")
	}
	if len(meta) > 0 {
		m.printf("%s\n\n", strings.Join(meta, " · "))
	}
	m.printf("<details><summary>code</summary>\n\n%s</details>\n\n", fenced("python", c.Source))
	for i, v := range c.Outputs {
		m.output(c.Name, i+1, v)
	}
	for _, w := range c.Warnings {
		m.printf("> ⚠ %s\n\n", mdEscape(w))
	}
	if c.Error != "" {
		m.printf("**Error**\n\n%s\n", fenced("", strings.TrimRight(c.Error+"\n"+c.Trace, "\n")))
	}
}

func (m *mdWriter) output(cell string, n int, v starlark.Value) {
	if v == nil {
		return
	}
	if s, ok := v.(SVGer); ok {
		svg := s.SVG()
		if reason := checkSVG(svg); reason != "" {
			m.printf("_%s_\n\n", mdEscape(reason))
			return
		}
		name := fmt.Sprintf("%s-%d.svg", slug(cell), n)
		m.figures = append(m.figures, figureFile{name: name, data: svg})
		m.printf("![%s figure %d](%s/%s)\n\n", mdEscape(cell), n, m.rel, name)
	} else {
		m.printf("%s\n\n", strings.TrimRight(m.valueBlock(v), "\n"))
	}
	if fs, ok := v.(FigureSet); ok {
		m.figureSet(cell, n, fs.Figures())
	}
	if d, ok := v.(Downloader); ok {
		m.downloads(cell, n, d.Downloads())
	}
}

// figureSet writes a value's figures as SVG files and links each under
// its caption.
func (m *mdWriter) figureSet(cell string, n int, figs []Figure) {
	for _, f := range figs {
		if reason := checkSVG(f.SVG); reason != "" {
			m.printf("_%s_\n\n", mdEscape(reason))
			continue
		}
		name := fmt.Sprintf("%s-%d-%s.svg", slug(cell), n, slug(f.Name))
		m.figures = append(m.figures, figureFile{name: name, data: f.SVG})
		m.printf("![%s](%s/%s)\n\n", mdEscape(f.Caption), m.rel, name)
	}
}

// downloads writes a value's data files whole beside the figures (the
// Markdown shows only a preview of them) and links each.
func (m *mdWriter) downloads(cell string, n int, ds []Download) {
	var links []string
	for _, d := range ds {
		ext := filepath.Ext(d.Name)
		name := fmt.Sprintf("%s-%d-%s%s", slug(cell), n, slug(strings.TrimSuffix(d.Name, ext)), "."+slug(ext))
		m.figures = append(m.figures, figureFile{name: name, data: d.Data})
		links = append(links, fmt.Sprintf("[%s](%s/%s) (%s)", mdEscape(d.Name), m.rel, name, bytesize.Format(int64(len(d.Data)))))
	}
	if len(links) > 0 {
		m.printf("download: %s\n\n", strings.Join(links, " · "))
	}
}

// valueBlock is a value as a Markdown block: its own Markdown, or its
// text fenced.
func (m *mdWriter) valueBlock(v starlark.Value) (out string) {
	defer func() {
		if p := recover(); p != nil {
			out = fenced("", fmt.Sprintf("cannot display %s value: %v", v.Type(), p))
		}
	}()
	if md, ok := v.(Markdowner); ok {
		return EscapeRawHTML(md.Markdown()) + mdDetail(v)
	}
	return fenced("", valueText(v))
}

// mdDetail is a MarkdownDetailer's detail in a <details> block ("" for
// other values): the value's own Markdown is escaped as any other, the
// block around it is the record's.
func mdDetail(v starlark.Value) string {
	d, ok := v.(MarkdownDetailer)
	if !ok {
		return ""
	}
	summary, body := d.MarkdownDetail()
	if strings.TrimSpace(body) == "" {
		return ""
	}
	return fmt.Sprintf("\n<details><summary>%s</summary>\n\n%s\n</details>\n", escapeText(summary), strings.TrimRight(EscapeRawHTML(body), "\n"))
}

// valueInline is a short value (the verdict) for use inside a paragraph.
func (m *mdWriter) valueInline(v starlark.Value) string {
	if md, ok := v.(Markdowner); ok {
		return EscapeRawHTML(md.Markdown()) + mdDetail(v)
	}
	return mdEscape(valueText(v))
}

func valueText(v starlark.Value) string {
	if s, ok := v.(starlark.String); ok {
		return string(s)
	}
	return v.String()
}

func (m *mdWriter) provenance(r *Record) {
	p := buildProv(r)
	m.printf("## Provenance\n\n| | |\n| --- | --- |\n")
	git := "not in git"
	if p.GitRev != "" {
		git = codeSpan(p.GitRev)
		if p.GitDirty {
			git += " **dirty**"
		}
	}
	cpu := mdCell(p.CPU)
	if p.Cores != "" {
		cpu += " · " + p.Cores + " cores"
	}
	rows := [][2]string{
		{"host", mdCell(p.Host)}, {"CPU", cpu}, {"memory", p.Memory}, {"kernel", mdCell(p.Kernel)},
		{"load average", p.Load}, {"Go", mdCell(p.GoVersion)}, {"benchbook", mdCell(p.Version)},
		{"git revision", git}, {"command line", codeSpan(p.CommandLine)},
	}
	for _, row := range rows {
		m.printf("| %s | %s |\n", row[0], row[1])
	}
	if len(p.Targets) > 0 {
		m.printf("\n**Targets**\n\n| what it runs | cells |\n| --- | --- |\n")
		for _, t := range p.Targets {
			m.printf("| %s | %s |\n", mdCell(t.What), mdCell(t.Cells))
		}
	}
	if len(p.Params) > 0 {
		m.printf("\n**Parameters**\n\n| name | value |\n| --- | --- |\n")
		for _, kv := range p.Params {
			m.printf("| %s | %s |\n", codeSpan(kv[0]), codeSpan(kv[1]))
		}
	}
	if len(p.Inputs) > 0 {
		m.printf("\n**Inputs**\n\n| cell | kind | name | hash |\n| --- | --- | --- | --- |\n")
		for _, in := range p.Inputs {
			m.printf("| %s | %s | %s | %s |\n", mdCell(in.Cell), mdCell(in.Kind), codeSpan(in.Name), codeSpan(in.Hash))
		}
	}
}

// writeFigures replaces the files of the figures directory (SVGs and data
// files, all named after their cell).
func (m *mdWriter) writeFigures() error {
	old, _ := filepath.Glob(filepath.Join(m.dir, "*"))
	for _, f := range old {
		_ = os.Remove(f)
	}
	if len(m.figures) == 0 {
		return nil
	}
	if err := os.MkdirAll(m.dir, 0o755); err != nil {
		return fmt.Errorf("record: figures dir: %w", err)
	}
	for _, f := range m.figures {
		if err := writeAtomic(filepath.Join(m.dir, f.name), f.data); err != nil {
			return err
		}
	}
	return nil
}

// writeAtomic writes data to a temporary file and renames it into place,
// so a reader never sees half a record.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("record: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600; a record is made to be read by
	// others (a web server, a reviewer on the same box), as a file
	// written by os.WriteFile would be.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("record: write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("record: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("record: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("record: write %s: %w", path, err)
	}
	return nil
}

// mdEscape backslash-escapes the characters that Markdown or GitHub would
// turn into markup or raw HTML.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>|#!~&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdTitle escapes a title but keeps its `code spans`: the title comes
// from the notebook's Markdown heading, where they were meant as code.
func mdTitle(s string) string {
	var b strings.Builder
	for i, part := range titleParts(s) {
		if i%2 == 1 {
			b.WriteString(codeSpan(part))
		} else {
			b.WriteString(mdEscape(part))
		}
	}
	return b.String()
}

// titleParts splits a title at its backticks: even parts are text, odd
// ones code. An unpaired backtick stays text.
func titleParts(s string) []string {
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 { // an odd number of backticks: the last is literal
		last := parts[len(parts)-2] + "`" + parts[len(parts)-1]
		parts = append(parts[:len(parts)-2], last)
	}
	return parts
}

// mdCell is text escaped for one table cell (no line breaks).
func mdCell(s string) string {
	return mdEscape(strings.Join(strings.Fields(s), " "))
}

// codeSpan wraps s in enough backticks that none inside can close it.
func codeSpan(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return ""
	}
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return ticks + " " + strings.ReplaceAll(s, "|", "\\|") + " " + ticks
	}
	return ticks + strings.ReplaceAll(s, "|", "\\|") + ticks
}

// fenced returns text as a fenced code block whose fence no line inside
// can close.
func fenced(lang, text string) string {
	fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
	return fence + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + fence + "\n"
}

func longestRun(s string, c rune) int {
	best, n := 0, 0
	for _, r := range s {
		if r == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}
