package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/benchbook/benchbook/builtins/metric/gate"
	"github.com/benchbook/benchbook/runtime/limits"
	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/stats"
)

// Regression gates: `benchbook run -baseline old.json nb.star` compares the
// runs of this record's comparisons with those of an earlier JSON record,
// with compare's statistics (package gate: the B/A pair ratios of each
// record when both are paired, else each record's B/A of its unpaired
// arms, B alone only without A runs), and fails when the whole
// interval of now / then lies beyond the tolerance in the bad direction
// (with -fail-undecided, also when a gate is undecided). Every comparison
// a cell bound to a global name is gated, shown or not, and so is every
// comparison a cell displayed. Each gate (and each
// comparison that could not be gated) is one line on stderr; a run in which
// nothing could be gated fails. Records from a different kind of machine
// are refused unless the comparison is declared exploratory, and records
// made with other parameters unless -allow-param-mismatch.

type gateOptions struct {
	baseline           string
	maxRegression      float64 // percent
	allowMismatch      bool
	allowParamMismatch bool
	failUndecided      bool // a gate the runs cannot decide fails the run
}

func (o *gateOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.baseline, "baseline", "", "JSON record of an earlier run: fail when a comparison's runs show a regression beyond -max-regression")
	fs.Float64Var(&o.maxRegression, "max-regression", 5, "with -baseline: the tolerance, in percent: REGRESSION only when the whole 95 % interval of now/then lies beyond it")
	fs.BoolVar(&o.allowMismatch, "allow-env-mismatch", false, "with -baseline: compare records from different machines (exploratory: no gates)")
	fs.BoolVar(&o.allowParamMismatch, "allow-param-mismatch", false, "with -baseline: gate even when the baseline ran with other -p parameters")
	fs.BoolVar(&o.failUndecided, "fail-undecided", false, "with -baseline: fail when a gate is undecided (too few runs, an interval that reaches past the tolerance, or arms that moved apart), not only on REGRESSION")
}

// applyGates compares rec with the baseline; it returns an error when a
// gate failed, nothing could be gated, or the environments or parameters
// differ, and adds its findings to the record's warnings.
func applyGates(rec *record.Record, o gateOptions, stderr io.Writer) error {
	base, err := readBaseline(o.baseline)
	if err != nil {
		return err
	}
	if diff := gate.HostDiff(base.Host, gate.Host{CPU: rec.Prov.Host.CPU, Cores: rec.Prov.Host.Cores, MemBytes: rec.Prov.Host.MemBytes}); diff != "" {
		if !o.allowMismatch {
			return usageError{fmt.Sprintf("-baseline %s was measured on another kind of machine (%s); refusing to compare. -allow-env-mismatch makes the comparison exploratory (no gates)", o.baseline, diff)}
		}
		rec.Warnings = append(rec.Warnings, "baseline from another machine ("+diff+"): exploratory comparison, gates skipped")
		fmt.Fprintf(stderr, "baseline from another machine (%s): exploratory, gates skipped\n", diff)
		return nil
	}
	if diff := gate.ParamDiff(base.Params, rec.Prov.Params); diff != "" {
		if !o.allowParamMismatch {
			return usageError{fmt.Sprintf("-baseline %s ran with other parameters (%s); refusing to gate. Rerun with the baseline's -p values, or -allow-param-mismatch to gate anyway", o.baseline, diff)}
		}
		line := "baseline ran with other parameters (" + diff + "): gated anyway (-allow-param-mismatch)"
		rec.Warnings = append(rec.Warnings, line)
		fmt.Fprintln(stderr, line)
	}
	return runGates(rec, gate.ByID(base.Figures), o, stderr)
}

func readBaseline(path string) (gate.Baseline, error) {
	data, err := limits.ReadFile(path, limits.Record)
	if err != nil {
		return gate.Baseline{}, fmt.Errorf("-baseline: %w", err)
	}
	base, err := gate.ParseBaseline(data)
	if err != nil {
		return base, fmt.Errorf("-baseline %s: %v", path, err)
	}
	return base, nil
}

// runGates runs the gates, one line each on stderr and in the record, plus a
// line for each comparison that had nothing to be gated against.
func runGates(rec *record.Record, old map[string]gate.Figure, o gateOptions, stderr io.Writer) error {
	now := currentMetrics(rec)
	results := gate.Compare(now, old, o.maxRegression, stats.DefaultAlpha)
	note := func(line string) {
		fmt.Fprintln(stderr, line)
		rec.Warnings = append(rec.Warnings, line)
	}
	gated := map[string]bool{}
	failed, undecided := 0, 0
	for _, r := range results {
		if r.Failed {
			failed++
		}
		if r.Undecided {
			undecided++
		}
		gated[r.ID()] = true
		note(r.Line(o.maxRegression))
	}
	for _, m := range now {
		if !gated[m.ID()] {
			note(fmt.Sprintf("not gated %s: %s (%s)", m.ID(), m.Metric, gate.WhyNot(m, old)))
		}
	}
	if len(results) == 0 {
		return fmt.Errorf("-baseline %s: nothing could be gated: this run has %d comparison(s), the baseline %d, none in common by cell and name (or with runs to compare)",
			o.baseline, len(now), len(old))
	}
	switch {
	case failed > 0 && o.failUndecided && undecided > 0:
		return fmt.Errorf("%d of %d regression gates failed and %d were undecided (-fail-undecided) against %s", failed, len(results), undecided, o.baseline)
	case failed > 0:
		return fmt.Errorf("%d of %d regression gates failed against %s", failed, len(results), o.baseline)
	case o.failUndecided && undecided > 0:
		return fmt.Errorf("%d of %d regression gates were undecided against %s, and -fail-undecided fails them: the runs cannot tell a regression from noise", undecided, len(results), o.baseline)
	}
	return nil
}

// currentMetrics lists this run's comparisons: the named ones, then the
// displayed ones that are not also named (the same value shown).
func currentMetrics(rec *record.Record) []gate.Figure {
	var named, shown []gate.Figure
	for _, n := range rec.Named {
		if j, ok := n.Value.(record.JSONer); ok {
			if m, ok := gate.FromJSON(n.Cell, n.Name, j.JSON()); ok {
				named = append(named, m)
			}
		}
	}
	for _, c := range rec.Cells {
		for _, v := range c.Outputs {
			j, ok := v.(record.JSONer)
			if !ok || v.Type() != "comparison" {
				continue
			}
			if m, ok := gate.FromJSON(c.Name, "", j.JSON()); ok {
				shown = append(shown, m)
			}
		}
	}
	return gate.MergeShown(named, shown)
}
