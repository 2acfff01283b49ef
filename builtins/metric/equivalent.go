package metric

import (
	"errors"
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime"
)

// maxListed bounds how many mismatches an equivalence result spells out.
const maxListed = 20

// The rule by which equivalent() compares answers is the input of a cell
// that judges equivalence (as compare's method is of one that compares):
// a result cached under another rule is computed again, and the record's
// provenance names the rule, not compare's statistics.
const (
	equivalenceMethod  = "equivalent"
	equivalenceVersion = "1: answers equal by content (==; a table row by row, in column and row order)"
)

// equivalentBuiltin implements
// equivalent(a, b, allow_vacuous = False, allow_mismatch = False): a and b
// are the answers of two arms to the same queries, as dicts keyed by query
// or as lists in query order. Answers compare with ==, so they can be ids,
// ordered lists, totals, hashes or whole query answers (tables compare by
// content, so pg.query() results of two arms can be compared as they come).
//
// Arms that answer differently (or a query one arm did not answer) fail
// the cell, listing the queries and both answers: a speed-up that changes
// answers is not a result. allow_mismatch returns the mismatch as a value
// instead (ok = False), for notebooks that study the difference; a verdict
// of "kept" still refuses it. When two or more distinct queries all got
// the same answer the check proves nothing (the seeds' broken checker built
// malformed URLs that all returned the same total), and it fails unless
// allow_vacuous is set.
func equivalentBuiltin(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var a, b starlark.Value
	allowVacuous, allowMismatch := false, false
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "a", &a, "b", &b,
		"allow_vacuous?", &allowVacuous, "allow_mismatch?", &allowMismatch); err != nil {
		return nil, err
	}
	runtime.AddInput(thread, runtime.Input{Kind: "method", Name: equivalenceMethod, Hash: equivalenceVersion})
	keys, av, err := answers(a, "a")
	if err != nil {
		return nil, err
	}
	keysB, bv, err := answers(b, "b")
	if err != nil {
		return nil, err
	}
	res, err := check(keys, av, keysB, bv)
	if err != nil {
		return nil, err
	}
	if res.vacuous && !allowVacuous {
		return nil, fmt.Errorf("equivalent: vacuous: %d distinct queries all returned the same answer in arm %s (%s); the check proves nothing",
			len(keys), res.vacuousArm, short(res.sameAnswer))
	}
	if !res.ok() && !allowMismatch {
		return nil, res.mismatchError()
	}
	return res.value(), nil
}

// answers returns the queries (dict keys, or list positions) and answers.
func answers(v starlark.Value, name string) ([]starlark.Value, []starlark.Value, error) {
	switch x := v.(type) {
	case *starlark.Dict:
		var keys, vals []starlark.Value
		for _, kv := range x.Items() {
			keys = append(keys, kv[0])
			vals = append(vals, kv[1])
		}
		return keys, vals, nil
	case *starlark.List, starlark.Tuple:
		vals, err := list(v, name)
		keys := make([]starlark.Value, len(vals))
		for i := range vals {
			keys[i] = starlark.MakeInt(i)
		}
		return keys, vals, err
	}
	hint := ""
	if isTable(v) {
		hint = ": pass {query: table} for each arm"
	}
	return nil, nil, fmt.Errorf("equivalent: %s must be a dict (query -> answer) or a list, got %s%s", name, v.Type(), hint)
}

type equivalence struct {
	compared, distinctA, distinctB int
	mismatches                     []string
	missing                        []string
	vacuous                        bool
	vacuousArm                     string
	sameAnswer                     starlark.Value
}

func check(keys, av, keysB, bv []starlark.Value) (*equivalence, error) {
	byKey, err := index(keysB, bv)
	if err != nil {
		return nil, err
	}
	inA, err := index(keys, av)
	if err != nil {
		return nil, err
	}
	res := &equivalence{distinctA: distinct(av), distinctB: distinct(bv)}
	for i, k := range keys {
		other, found, _ := byKey.Get(k)
		if !found {
			res.missing = append(res.missing, k.String()+" (missing from b)")
			continue
		}
		res.compared++
		eq, err := starlark.Equal(av[i], other)
		if err != nil {
			return nil, fmt.Errorf("equivalent: query %s: %w", k, err)
		}
		if !eq {
			res.mismatches = append(res.mismatches, fmt.Sprintf("%s: %s", k, difference(av[i], other)))
		}
	}
	for _, k := range keysB {
		if _, found, _ := inA.Get(k); !found {
			res.missing = append(res.missing, k.String()+" (missing from a)")
		}
	}
	if len(keys) >= 2 && (res.distinctA == 1 || res.distinctB == 1) {
		res.vacuous, res.vacuousArm, res.sameAnswer = true, "a", av[0]
		if res.distinctA != 1 {
			res.vacuousArm, res.sameAnswer = "b", bv[0]
		}
	}
	return res, nil
}

func index(keys, vals []starlark.Value) (*starlark.Dict, error) {
	d := starlark.NewDict(len(keys))
	for i, k := range keys {
		if err := d.SetKey(k, vals[i]); err != nil {
			return nil, fmt.Errorf("equivalent: %w", err)
		}
	}
	return d, nil
}

func (e *equivalence) ok() bool { return len(e.mismatches) == 0 && len(e.missing) == 0 }

// mismatchError lists the queries whose answers differ, with both answers.
func (e *equivalence) mismatchError() error {
	var b strings.Builder
	fmt.Fprintf(&b, "equivalent: the arms answer differently: %s (allow_mismatch = True returns this as a value)", e.summary())
	listed := append(append([]string(nil), e.mismatches...), e.missing...)
	for i, m := range listed {
		if i == maxListed {
			fmt.Fprintf(&b, "\n  ... and %d more", len(listed)-maxListed)
			break
		}
		b.WriteString("\n  " + m)
	}
	return errors.New(b.String())
}

// distinct counts distinct answers by their printed form (answers may be
// unhashable lists or dicts).
func distinct(vals []starlark.Value) int {
	seen := map[string]bool{}
	for _, v := range vals {
		seen[v.String()] = true
	}
	return len(seen)
}

func short(v starlark.Value) string {
	s := v.String()
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

func (e *equivalence) value() starlark.Value {
	listed := e.mismatches
	if len(listed) > maxListed {
		listed = listed[:maxListed]
	}
	return starlarkstruct.FromStringDict(starlark.String("equivalence"), starlark.StringDict{
		"ok":             starlark.Bool(e.ok()),
		"compared":       starlark.MakeInt(e.compared),
		"mismatch_count": starlark.MakeInt(len(e.mismatches)),
		"mismatches":     starval.StringList(listed),
		"missing":        starval.StringList(e.missing),
		"distinct_a":     starlark.MakeInt(e.distinctA),
		"distinct_b":     starlark.MakeInt(e.distinctB),
		"vacuous":        starlark.Bool(e.vacuous),
		"summary":        starlark.String(e.summary()),
	})
}

func (e *equivalence) summary() string {
	s := fmt.Sprintf("%d mismatches in %d queries (%d distinct answers in a, %d in b)",
		len(e.mismatches), e.compared, e.distinctA, e.distinctB)
	if len(e.missing) > 0 {
		s += fmt.Sprintf("; %d queries answered by one arm only", len(e.missing))
	}
	if e.vacuous {
		s += "; VACUOUS: every query got the same answer"
	}
	return s
}
