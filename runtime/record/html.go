package record

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"regexp"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yuin/goldmark/ast"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/bytesize"
)

//go:embed record.css
var baseCSS string

//go:embed record.html.tmpl
var pageTemplate string

var page = template.Must(template.New("record").Parse(pageTemplate))

// HTML writes r as one self-contained HTML document: no script, no external
// URL, a Content-Security-Policy that forbids loading anything, and every
// string taken from the notebook or a value escaped.
func HTML(w io.Writer, r *Record) error {
	v := buildView(r)
	// The page is rendered whole before any of it is written, so an error
	// leaves w as it was. Into a bytes.Buffer (benchbook run's) directly,
	// cut back on error; and grown once to about the page's size: growing
	// it by doubling was a sixth of a cached 3,000-cell rerun (6 MB page,
	// the new memory's page faults in memclr).
	buf, ok := w.(*bytes.Buffer)
	if !ok {
		buf = new(bytes.Buffer)
	}
	start := buf.Len()
	buf.Grow(v.size())
	if err := page.Execute(buf, v); err != nil {
		buf.Truncate(start)
		return fmt.Errorf("record: render html: %w", err)
	}
	if ok {
		return nil
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// size estimates the page's length: its fragments, and per cell what the
// template adds around them.
func (v *view) size() int {
	n := 64<<10 + len(v.CSS)
	for _, c := range v.Cells {
		n += 512 + len(c.HTML) + len(c.Code)
		for _, o := range c.Outputs {
			n += len(o)
		}
	}
	return n
}

// view is what the page template shows; fragments typed template.HTML were
// produced by trusted renderers (goldmark without raw HTML, chroma, SVG
// checked by inlineSVG, HTMLer values).
type view struct {
	Title, Path, Rendered, Host string
	TitleHTML                   template.HTML // the title with its `code spans` as <code>
	CSS                         template.CSS
	Verdict                     template.HTML
	Summary                     string
	Warnings                    []string
	TOC                         []tocEntry
	Cells                       []cellView
	Prov                        provView
}

type tocEntry struct {
	Level  int
	Text   string
	ID     string
	Status Status // set for code cells
}

type cellView struct {
	ID, Name, Why        string
	Status               Status
	Markdown             bool
	HTML                 template.HTML // rendered Markdown cell
	Code                 template.HTML // highlighted source
	Line                 int
	Duration, When, Host string
	Load                 string // load average when the cell started
	Foreign              bool   // computed on a host other than the record's
	Outputs              []template.HTML
	Warnings             []string
	Error, Trace         string
}

// titleHTML escapes the title and shows its `code spans` as code, as the
// notebook's Markdown heading it came from would.
func titleHTML(title string) template.HTML {
	var b strings.Builder
	for i, part := range titleParts(title) {
		if i%2 == 1 {
			b.WriteString("<code>" + escapeText(part) + "</code>")
		} else {
			b.WriteString(escapeText(part))
		}
	}
	return template.HTML(b.String())
}

// plainTitle is the title for the browser tab: code spans without their
// backticks.
func plainTitle(title string) string {
	return strings.Join(titleParts(title), "")
}

func buildView(r *Record) view {
	ids := newHeadingIDs("")
	v := view{
		Title:     plainTitle(r.Title),
		TitleHTML: titleHTML(r.Title),
		Path:      r.Path,
		Rendered:  fmtTime(r.Rendered),
		Host:      r.Prov.Host.Name,
		CSS:       template.CSS(pageCSS),
		Summary:   summary(r.Cells),
		Warnings:  r.Warnings,
		Prov:      buildProv(r),
	}
	if r.Verdict != nil {
		v.Verdict = valueHTML(r.Verdict)
	}
	cellIDs := make([]string, len(r.Cells))
	for i, c := range r.Cells {
		if !c.Markdown {
			cellIDs[i] = string(ids.Generate([]byte("cell "+c.Name), ast.KindHeading))
		}
	}
	section := 0 // level of the last heading: code cells nest under it
	cells := withoutTitleHeading(r.Cells, r.Title)
	code := highlightAll(cells)
	for i, c := range cells {
		cv, heads := buildCell(c, r.Prov.Host.Name, cellIDs[i], code[i], ids)
		v.Cells = append(v.Cells, cv)
		for _, h := range heads {
			if h.Status != "" {
				h.Level = min(section+1, 4)
			} else {
				section = h.Level
			}
			v.TOC = append(v.TOC, h)
		}
	}
	return v
}

// highlightAll highlights the code cells' sources on every CPU at once:
// it is a third of a cached rerun's time (chroma's lexer runs a regexp per
// rule and token), and each cell's is independent of the others'.
func highlightAll(cells []Cell) []template.HTML {
	out := make([]template.HTML, len(cells))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(goruntime.GOMAXPROCS(0), len(cells)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(cells); i = int(next.Add(1) - 1) {
				if !cells[i].Markdown {
					out[i] = highlight(cells[i].Source)
				}
			}
		})
	}
	wg.Wait()
	return out
}

func buildCell(c Cell, host, id string, code template.HTML, ids *headingIDs) (cellView, []tocEntry) {
	if c.Markdown {
		html, heads := renderMarkdown(c.Source, ids)
		var toc []tocEntry
		for _, h := range heads {
			if h.Level <= 3 {
				toc = append(toc, tocEntry{Level: h.Level, Text: h.Text, ID: h.ID})
			}
		}
		return cellView{Markdown: true, HTML: template.HTML(html)}, toc
	}
	cv := cellView{
		ID: id, Name: c.Name, Status: c.Status, Why: c.Why, Line: c.Line,
		Code:     code,
		Warnings: c.Warnings, Error: c.Error, Trace: c.Trace,
		Host:    c.Host,
		Foreign: c.Host != "" && host != "" && c.Host != host,
	}
	if cv.Status == "" {
		cv.Status = StatusNever
	}
	if !c.ComputedAt.IsZero() {
		cv.Duration = FormatDuration(c.Duration)
		cv.When = fmtTime(c.ComputedAt)
	}
	if c.Load1 > 0 {
		cv.Load = fmt.Sprintf("%.2f", c.Load1)
	}
	for _, out := range c.Outputs {
		cv.Outputs = append(cv.Outputs, valueHTML(out))
	}
	return cv, []tocEntry{{Text: c.Name, ID: id, Status: cv.Status}}
}

// summary is the one-line account of the cells: "5 cells: 2 ran, 3 hit".
func summary(cells []Cell) string {
	counts := map[Status]int{}
	n := 0
	for _, c := range cells {
		if c.Markdown {
			continue
		}
		n++
		s := c.Status
		if s == "" {
			s = StatusNever
		}
		counts[s]++
	}
	var parts []string
	for _, s := range Statuses {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
			delete(counts, s)
		}
	}
	others := make([]Status, 0, len(counts))
	for s := range counts {
		others = append(others, s)
	}
	slices.Sort(others)
	for _, s := range others {
		parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
	}
	return fmt.Sprintf("%d code cells: %s", n, strings.Join(parts, ", "))
}

// valueHTML presents one output value. A value whose display method panics
// is shown as an error instead of crashing the render.
func valueHTML(v starlark.Value) (out template.HTML) {
	if v == nil {
		return ""
	}
	defer func() {
		if p := recover(); p != nil {
			out = template.HTML(`<p class="error">cannot display ` + escapeText(v.Type()) + ` value: ` +
				escapeText(fmt.Sprint(p)) + `</p>`)
		}
	}()
	var b strings.Builder
	switch x := v.(type) {
	case SVGer:
		b.WriteString(`<figure>` + inlineSVG(x.SVG()) + `</figure>`)
	case HTMLer:
		b.WriteString(x.HTML())
	default:
		class := "value"
		if v.Type() == "printed" {
			class = "printed"
		}
		text := v.String()
		if s, ok := v.(starlark.String); ok {
			text = string(s)
		}
		b.WriteString(`<pre class="` + class + `">` + escapeText(text) + `</pre>`)
	}
	if fs, ok := v.(FigureSet); ok {
		for _, f := range fs.Figures() {
			b.WriteString(`<figure>` + inlineSVG(f.SVG) + `<figcaption>` + escapeText(f.Caption) + `</figcaption></figure>`)
		}
	}
	if d, ok := v.(Downloader); ok {
		b.WriteString(downloadLinks(d.Downloads()))
	}
	return template.HTML(b.String())
}

// downloadLinks embeds files as data: URIs so they can be saved offline.
func downloadLinks(ds []Download) string {
	if len(ds) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<p class="downloads">download:`)
	for _, d := range ds {
		mime := d.MIME
		if mime == "" || strings.ContainsAny(mime, "\"<>; ") {
			mime = "application/octet-stream"
		}
		fmt.Fprintf(&b, ` <a download="%s" href="data:%s;base64,%s">%s</a> <small>(%s)</small>`,
			escapeText(d.Name), mime, base64.StdEncoding.EncodeToString(d.Data),
			escapeText(d.Name), bytesize.Format(int64(len(d.Data))))
	}
	b.WriteString(`</p>`)
	return b.String()
}

// inlineSVG returns doc without its XML prolog, or an error note when doc is
// not an SVG document or could run script or fetch anything.
func inlineSVG(doc []byte) string {
	if reason := checkSVG(doc); reason != "" {
		return `<p class="error">` + escapeText(reason) + `</p>`
	}
	return stripProlog(string(doc))
}

// checkSVG says why doc may not be shown, or "" when it is a plain SVG
// document (our plot package's output is trusted, but still checked).
func checkSVG(doc []byte) string {
	lower := strings.ToLower(stripProlog(string(doc)))
	if !strings.HasPrefix(lower, "<svg") || !strings.HasSuffix(lower, "</svg>") {
		return "figure is not an SVG document"
	}
	if reason := unsafeSVG(lower); reason != "" {
		return "figure rejected: SVG with " + reason
	}
	return ""
}

// stripProlog drops the XML declaration, comments and DOCTYPE before <svg.
func stripProlog(s string) string {
	for {
		s = strings.TrimSpace(s)
		switch {
		case strings.HasPrefix(s, "<?"):
			s = cutThrough(s, "?>")
		case strings.HasPrefix(s, "<!--"):
			s = cutThrough(s, "-->")
		case strings.HasPrefix(s, "<!"):
			s = cutThrough(s, ">")
		default:
			return s
		}
	}
}

var eventAttr = regexp.MustCompile(`<[^>]*\son[a-z]+\s*=`)

// unsafeSVG names what in a lowercased SVG could run script or load a URL.
func unsafeSVG(lower string) string {
	for _, bad := range []string{"<script", "javascript:", "<foreignobject", `href="http`, "href='http", "url(http"} {
		if strings.Contains(lower, bad) {
			return bad
		}
	}
	if eventAttr.MatchString(lower) {
		return "event handler attribute"
	}
	return ""
}

func cutThrough(s, end string) string {
	if i := strings.Index(s, end); i >= 0 {
		return s[i+len(end):]
	}
	return ""
}

func escapeText(s string) string { return template.HTMLEscapeString(s) }

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// FormatDuration is how benchbook shows a duration, to about three
// significant figures (1.23s, 45.7ms, 812µs): in the record, and on the
// terminal (progress lines, the REPL, the run's summary), so a cell's time
// reads the same in both.
func FormatDuration(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}
