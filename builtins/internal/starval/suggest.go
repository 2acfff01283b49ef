package starval

import (
	"fmt"
	"sort"
	"strings"

	"go.starlark.net/starlark"
)

// missing explains a metric name v does not have: that v was interrupted
// before its figures were taken (a Ctrl-C'd run has no observer figures),
// what v itself says (explainer: an observer that saw none of a run's
// requests), that it completed no requests to divide a figure per request by, or the
// nearest name it does have, as Starlark does for attributes.
func missing(v starlark.Value, name string) error {
	msg := fmt.Sprintf("%s has no metric %q", v.Type(), name)
	if b, ok := Attr(v, "interrupted").(starlark.Bool); ok && bool(b) {
		return fmt.Errorf("%s: it was interrupted (Ctrl-C) before its figures were taken", msg)
	}
	if e, ok := v.(explainer); ok {
		if why := e.WhyMissing(name); why != "" {
			return fmt.Errorf("%s: %s", msg, why)
		}
	}
	if c, ok := Attr(v, "count").(starlark.Int); ok && c.Sign() == 0 && strings.HasSuffix(name, "_per_req") {
		return fmt.Errorf("%s: it completed no requests in its measured window, so it has no figures per request (a longer duration, or a target that answers within it)", msg)
	}
	if n := nearest(name, names(v)); n != "" {
		return fmt.Errorf("%s (did you mean %q?)", msg, n)
	}
	return fmt.Errorf("%s", msg)
}

// explainer is a value that can say why it has no figure name: a run
// whose observer took its first snapshot after all its requests.
type explainer interface{ WhyMissing(name string) string }

// names are v's attribute names and, for a dict, its string keys.
func names(v starlark.Value) []string {
	var out []string
	if ha, ok := v.(starlark.HasAttrs); ok {
		out = append(out, ha.AttrNames()...)
	}
	if d, ok := v.(starlark.IterableMapping); ok {
		for _, kv := range d.Items() {
			if s, ok := starlark.AsString(kv[0]); ok {
				out = append(out, s)
			}
		}
	}
	sort.Strings(out)
	return out
}

// nearest is the candidate closest to x by edit distance, if close enough
// to be a typo (at most 1 + len(x)/4 edits), else "".
func nearest(x string, candidates []string) string {
	best, bestD := "", 1+len(x)/4+1
	for _, c := range candidates {
		if d := editDistance(x, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}
