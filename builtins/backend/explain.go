package backend

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime"
)

var (
	planTimeRe = regexp.MustCompile(`Planning Time: ([0-9.]+) ms`)
	execTimeRe = regexp.MustCompile(`Execution Time: ([0-9.]+) ms`)
	buffersRe  = regexp.MustCompile(`Buffers: shared((?: \w+=\d+)+)`)
	costRe     = regexp.MustCompile(`cost=[0-9.]+\.\.([0-9.]+) rows=(\d+)`)
)

// explain is .explain(sql, analyze=True, buffers=True): the plan text and
// the numbers an investigator compares (planning and execution ms, shared
// blocks hit/read of the top node, estimated total cost and rows).
func (h *pgHandle) explain(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var sql string
	analyze, buffers := true, true
	if err := starlark.UnpackArgs(name, args, kwargs, "sql", &sql, "analyze?", &analyze, "buffers?", &buffers); err != nil {
		return nil, err
	}
	db, err := h.db(th)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	opts := fmt.Sprintf("ANALYZE %t, BUFFERS %t", analyze, buffers && analyze)
	rs, err := db.Query(runtime.Context(th), "EXPLAIN ("+opts+") "+sql)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer rs.Close()
	var lines []string
	for rs.Next() {
		var l string
		if err := rs.Scan(&l); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		lines = append(lines, l)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return planValue(strings.Join(lines, "\n")), nil
}

// planValue parses the numbers out of EXPLAIN's text.
func planValue(text string) starlark.Value {
	f := func(re *regexp.Regexp) starlark.Value {
		if m := re.FindStringSubmatch(text); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			return starlark.Float(v)
		}
		return starlark.None
	}
	fields := starlark.StringDict{
		"text":         starlark.String(text),
		"planning_ms":  f(planTimeRe),
		"execution_ms": f(execTimeRe),
		"shared_hit":   starlark.MakeInt(0),
		"shared_read":  starlark.MakeInt(0),
		"cost":         starlark.None,
		"rows":         starlark.None,
	}
	if m := buffersRe.FindStringSubmatch(text); m != nil {
		for _, kv := range strings.Fields(m[1]) {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.Atoi(v)
			if k == "hit" || k == "read" {
				fields["shared_"+k] = starlark.MakeInt(n)
			}
		}
	}
	if m := costRe.FindStringSubmatch(text); m != nil {
		c, _ := strconv.ParseFloat(m[1], 64)
		r, _ := strconv.Atoi(m[2])
		fields["cost"], fields["rows"] = starlark.Float(c), starlark.MakeInt(r)
	}
	return starlarkstruct.FromStringDict(starlark.String("plan"), fields)
}
