package workload

import (
	"html"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/guard"
)

// A run's guard trips (loadgen/guards.go watches them) as the notebook sees
// them: valid, invalid_reason, trips, and in the record under the run.

// invalidSuffix marks an invalid run wherever it is printed (inside an
// experiment's struct, a list of runs).
func (r *Run) invalidSuffix() string {
	if why := guard.Invalid(r.d.Trips); why != "" {
		return "; INVALID: " + why
	}
	return ""
}

// valid says whether no guard tripped fatally.
func (r *Run) valid() bool { return guard.Invalid(r.d.Trips) == "" }

// tripList is run.trips: one struct per trip.
func tripList(trips []guard.Trip) *starlark.List {
	l := make([]starlark.Value, len(trips))
	for i, t := range trips {
		l[i] = starlarkstruct.FromStringDict(starlark.String("trip"), starlark.StringDict{
			"at": starlark.Float(t.At), "source": starlark.String(t.Source), "kind": starlark.String(t.Kind),
			"fatal": starlark.Bool(t.Fatal), "evidence": starlark.String(t.Evidence),
		})
	}
	return starlark.NewList(l)
}

// tripsHTML lists the trips under the run's table, fatal ones first marked.
func (r *Run) tripsHTML() string {
	if len(r.d.Trips) == 0 {
		return ""
	}
	var b strings.Builder
	if !r.valid() {
		b.WriteString(`<p class="warning"><strong>INVALID run</strong>: not a measurement.</p>`)
	}
	b.WriteString(`<ul class="trips">`)
	for _, t := range r.d.Trips {
		mark := "warning"
		if t.Fatal {
			mark = "fatal"
		}
		b.WriteString(`<li class="` + mark + `">` + mark + ": " + html.EscapeString(t.String()) + "</li>")
	}
	b.WriteString("</ul>")
	return b.String()
}

func (r *Run) tripsMarkdown() string {
	if len(r.d.Trips) == 0 {
		return ""
	}
	var b strings.Builder
	if !r.valid() {
		b.WriteString("\n**INVALID run**: not a measurement.\n")
	}
	b.WriteString("\n")
	for _, t := range r.d.Trips {
		mark := "warning"
		if t.Fatal {
			mark = "fatal"
		}
		b.WriteString("- " + mark + ": " + t.String() + "\n")
	}
	return b.String()
}
