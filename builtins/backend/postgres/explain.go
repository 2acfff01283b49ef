package postgres

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/record"
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
func (h *Handle) explain(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var sql string
	analyze, buffers := true, true
	if err := starlark.UnpackArgs(name, args, kwargs, "sql", &sql, "analyze?", &analyze, "buffers?", &buffers); err != nil {
		return nil, err
	}
	db, err := h.db(th, analyze && !kit.ReadOnly(sql)) // EXPLAIN ANALYZE executes it
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
	return parsePlan(strings.Join(lines, "\n")), nil
}

// plan is what .explain returns.
type plan struct {
	Text        string   `json:"text"`
	PlanningMS  *float64 `json:"planning_ms"`
	ExecutionMS *float64 `json:"execution_ms"`
	SharedHit   int64    `json:"shared_hit"`
	SharedRead  int64    `json:"shared_read"`
	Cost        *float64 `json:"cost"`
	Rows        *int64   `json:"rows"`
}

func decodePlan(data []byte, _ codec.Types) (starlark.Value, error) {
	p := &planValue{}
	if err := json.Unmarshal(data, &p.p); err != nil {
		return nil, err
	}
	return p, nil
}

// parsePlan parses the numbers out of EXPLAIN's text.
func parsePlan(text string) *planValue {
	p := plan{Text: text}
	f := func(re *regexp.Regexp) *float64 {
		if m := re.FindStringSubmatch(text); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			return &v
		}
		return nil
	}
	p.PlanningMS, p.ExecutionMS = f(planTimeRe), f(execTimeRe)
	if m := buffersRe.FindStringSubmatch(text); m != nil {
		for _, kv := range strings.Fields(m[1]) {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "hit":
				p.SharedHit = n
			case "read":
				p.SharedRead = n
			}
		}
	}
	if m := costRe.FindStringSubmatch(text); m != nil {
		c, _ := strconv.ParseFloat(m[1], 64)
		r, _ := strconv.ParseInt(m[2], 10, 64)
		p.Cost, p.Rows = &c, &r
	}
	return &planValue{p}
}

// planValue is the Starlark face of a plan: shown as EXPLAIN's own text.
type planValue struct{ p plan }

var (
	_ starlark.HasAttrs   = (*planValue)(nil)
	_ starlark.Comparable = (*planValue)(nil)
	_ codec.Marshaler     = (*planValue)(nil)
	_ record.Markdowner   = (*planValue)(nil)
)

func (v *planValue) String() string        { return v.p.Text }
func (v *planValue) Type() string          { return "plan" }
func (v *planValue) Freeze()               {}
func (v *planValue) Truth() starlark.Bool  { return true }
func (v *planValue) Hash() (uint32, error) { return starlark.String(v.p.Text).Hash() }

// CompareSameType: two plans are equal when everything EXPLAIN said is
// (their text, hence the hash, and the figures read from it).
func (v *planValue) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	a, _ := json.Marshal(v.p)
	b, _ := json.Marshal(y.(*planValue).p)
	return starval.EqualOnly(op, string(a) == string(b), v, y)
}
func (v *planValue) MarshalValue() ([]byte, error) { return json.Marshal(v.p) }
func (v *planValue) Markdown() string              { return "```\n" + v.p.Text + "\n```\n" }

func (v *planValue) AttrNames() []string {
	return []string{"cost", "execution_ms", "planning_ms", "rows", "shared_hit", "shared_read", "text"}
}

func (v *planValue) Attr(name string) (starlark.Value, error) {
	opt := func(f *float64) starlark.Value {
		if f == nil {
			return starlark.None
		}
		return starlark.Float(*f)
	}
	switch name {
	case "text":
		return starlark.String(v.p.Text), nil
	case "planning_ms":
		return opt(v.p.PlanningMS), nil
	case "execution_ms":
		return opt(v.p.ExecutionMS), nil
	case "cost":
		return opt(v.p.Cost), nil
	case "rows":
		if v.p.Rows == nil {
			return starlark.None, nil
		}
		return starlark.MakeInt64(*v.p.Rows), nil
	case "shared_hit":
		return starlark.MakeInt64(v.p.SharedHit), nil
	case "shared_read":
		return starlark.MakeInt64(v.p.SharedRead), nil
	}
	return nil, nil
}
