package workload

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// A run of a mix (requests = [...], or a generator that names each
// request's tag) has a run per tag: run.by_tag[tag], a whole run (count,
// rps, errors, p(q), ok_p(q), hist, windows, ...) over the same window,
// holding exactly the requests of that tag. What the window has only as a
// whole (the generator's CPU and GC, the observers' figures the server
// cannot tell apart, the guards' trips) is the run's, and a tag's warnings
// say which figures those are.

// tagRunsOf makes the per-tag runs of parent from what loadgen measured
// per tag.
func tagRunsOf(parent *Run, spec loadgen.Spec, tags map[string]*loadgen.Result, shares map[string]float64) map[string]*Run {
	if len(tags) == 0 {
		return nil
	}
	out := make(map[string]*Run, len(tags))
	for tag, res := range tags {
		sub := spec
		sub.Label = tag
		res.Trips = parent.d.Trips // the window's: a tag of an invalid run is invalid
		r := newRun(parent.d.Kind, sub, res)
		r.d.Tag, r.d.Share, r.parent = tag, shares[tag], parent
		out[tag] = r
	}
	return out
}

// sharedFigures gives each tag the run's observed figures, and says in its
// warnings that they are the whole run's (attributeTags gives a tag its
// own where the server tells the tags apart).
func sharedFigures(tags map[string]*Run, observed map[string]float64) {
	for _, r := range tags {
		r.d.Observed = observed
		r.ownFigures(nil, tagShared)
	}
}

// tagShared says whose a tag's shared figures are.
const tagShared = "the whole run's figures (the server does not tell the tags apart), not this tag's alone"

// byTagValue is run.by_tag: a frozen dict from tag to run, in the tags'
// order (sorted). Reading a tag's run is noted in the run (TagsRead), so
// that a comparison whose metric is a function can name the tags it read.
func (r *Run) byTagValue() *starlark.Dict {
	d := starlark.NewDict(len(r.tags))
	for _, k := range r.tagKeys() {
		_ = d.SetKey(starlark.String(k), r.tags[k])
	}
	d.Freeze()
	return d
}

func (r *Run) tagKeys() []string {
	keys := make([]string, 0, len(r.tags))
	for k := range r.tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// tagReads are the tags whose runs were read (an attribute of
// run.by_tag[tag]) since the last TagsRead: a comparison calls its metric
// function on each run and then names the tags it read
// (compare(metric = lambda r: r.by_tag["read"].p(99)) reads as
// "metric[read]" in the record).
type tagReads struct {
	mu   sync.Mutex
	tags []string
}

func (r *Run) noteTagRead(tag string) {
	r.reads.mu.Lock()
	defer r.reads.mu.Unlock()
	if !slices.Contains(r.reads.tags, tag) {
		r.reads.tags = append(r.reads.tags, tag)
	}
}

// TagsRead returns and forgets the tags read in by_tag since the last
// call; a tag's run read in turn (a scenario's tags) follows it:
// "reads][read", as a metric name writes it ("p99[reads][read]").
func (r *Run) TagsRead() []string {
	r.reads.mu.Lock()
	t := r.reads.tags
	r.reads.tags = nil
	r.reads.mu.Unlock()
	var out []string
	for _, tag := range t {
		nested := r.tags[tag].TagsRead()
		if len(nested) == 0 {
			out = append(out, tag)
		}
		for _, n := range nested {
			out = append(out, tag+"]["+n)
		}
	}
	return out
}

// Tag is a per-tag run's tag, "" for a whole run.
func (r *Run) Tag() string { return r.d.Tag }

// tagTable is a mix's runs as the record shows them under the run's own
// row: one row per tag, with its share of the requests (and of the
// weights, for a mix).
func (r *Run) tagTable() (head []string, rows [][]string) {
	if len(r.tags) == 0 {
		return nil, nil
	}
	head = []string{"tag", "share", "ok", "req/s"}
	for _, q := range summaryQuantiles {
		head = append(head, "p"+fmtQ(q))
	}
	head = append(head, "errors")
	open := r.d.Rate > 0
	if open {
		head = append(head, "dropped")
	}
	head = append(head, "intended")
	for _, k := range r.tagKeys() {
		t := r.tags[k]
		share := "-"
		if r.d.Intended > 0 {
			share = fmt.Sprintf("%.1f %%", 100*float64(t.d.Intended)/float64(r.d.Intended))
		}
		if t.d.Share > 0 {
			share += fmt.Sprintf(" (weights %.1f %%)", 100*t.d.Share)
		}
		row := []string{k, share, fmt.Sprint(t.d.Count), fmt.Sprintf("%.1f", t.RPS())}
		for _, q := range summaryQuantiles {
			row = append(row, fmtMs(quantileMs(t.d.Hist, q)))
		}
		row = append(row, t.errorText())
		if open {
			row = append(row, fmt.Sprint(t.d.Dropped))
		}
		rows = append(rows, append(row, fmt.Sprint(t.d.Intended)))
	}
	return head, rows
}

// tagsMarkdown is tagTable in Markdown, "" without tags.
func (r *Run) tagsMarkdown() string {
	head, rows := r.tagTable()
	if head == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nby tag:\n\n| " + strings.Join(head, " | ") + " |\n|" + strings.Repeat(" --- |", len(head)) + "\n")
	for _, row := range rows {
		for i := range row {
			row[i] = strings.ReplaceAll(row[i], "|", `\|`)
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	return b.String()
}

// tagsHTML is tagTable in HTML, "" without tags.
func (r *Run) tagsHTML() string {
	head, rows := r.tagTable()
	if head == nil {
		return ""
	}
	return htmlTable("run by-tag", head, rows)
}

// Tags are a mix's tags, sorted; none for an untagged run.
func (r *Run) Tags() []string { return r.tagKeys() }
