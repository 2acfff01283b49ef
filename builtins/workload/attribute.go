package workload

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/benchbook/benchbook/builtins/internal/handle"
)

// A run's observers measure its window as a whole; a server that counts
// per statement (pg_stat_statements) can tell a mix's tags apart, and a
// concurrent group's scenarios, when each runs statements of its own. Such
// an observer gives a run the window's statements (handle.Statements, a
// sink on the run's context), and each tag (or scenario) gets the
// statement figures of its own statements, per request of its own
// successes: buffers, shared_read, plan_exec_ms and statements, and their
// _per_req. The other figures stay the run's, and its warnings say which.

// statementSink collects the statements the observers give as their
// windows close.
type statementSink struct {
	mu  sync.Mutex
	got []handle.Statement
}

func (s *statementSink) add(st []handle.Statement) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, st...)
}

func (s *statementSink) context(ctx context.Context) context.Context {
	return handle.WithStatements(ctx, s.add)
}

func (s *statementSink) statements() []handle.Statement {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// sqlLiteral is what pg_stat_statements folds into $n: constants, and the
// parameters a statement had.
var sqlLiteral = regexp.MustCompile(`\$\d+|'(?:[^']|'')*'|\b\d+(?:\.\d+)?\b`)

// statementKey is a statement's text as both the client's and the
// server's forms of it read alike: constants and parameters as ?, case
// and spacing folded.
func statementKey(q string) string {
	q = sqlLiteral.ReplaceAllString(strings.ToLower(q), "?")
	return strings.TrimRight(strings.Join(strings.Fields(q), " "), "; ")
}

// attributed are each part's statement figures (parts: the scripts a
// part runs, each its statements as the client sent them; successes: its
// successful requests). A part one of whose statements another part runs
// too gets none: they cannot be told apart.
//
// Its figures per request divide by the requests the server ran in the
// observer's window: the executions of its scripts' first statements (each
// request runs its script's first statement once). Divided by the
// client's count instead, a window's edges (the observer opens a moment
// after the load) put a slow scan at 18 of a 23-page table's buffers, and
// a point lookup at 0.9 statements a request.
func attributed(stmts []handle.Statement, parts map[string][][]string) map[string]map[string]float64 {
	owner := map[string]string{}
	shared := map[string]bool{}
	first := map[string]bool{}
	for part, scripts := range parts {
		for _, script := range scripts {
			for i, q := range script {
				k := statementKey(q)
				if o, ok := owner[k]; ok && o != part {
					shared[o], shared[part] = true, true
				}
				owner[k] = part
				if i == 0 {
					first[k] = true
				}
			}
		}
	}
	type sums struct {
		calls, runs, hit, read int64
		ms                     float64
	}
	by := map[string]*sums{}
	for _, st := range stmts {
		k := statementKey(st.Query)
		part, ok := owner[k]
		if !ok || shared[part] {
			continue
		}
		if by[part] == nil {
			by[part] = &sums{}
		}
		s := by[part]
		s.calls += st.Calls
		s.hit += st.SharedHit
		s.read += st.SharedRead
		s.ms += st.PlanExecMS
		if first[k] {
			s.runs += st.Calls
		}
	}
	out := map[string]map[string]float64{}
	for part := range parts {
		if shared[part] {
			continue
		}
		s := by[part]
		if s == nil {
			s = &sums{}
		}
		figs := map[string]float64{"buffers": float64(s.hit + s.read), "shared_read": float64(s.read),
			"plan_exec_ms": s.ms, "statements": float64(s.calls)}
		if s.runs > 0 {
			for k, v := range figs {
				figs[k+"_per_req"] = v / float64(s.runs)
			}
		}
		out[part] = figs
	}
	return out
}

// attributeTags gives r's tags their statement figures (tagScripts: the
// scripts each tag runs) from what the observers gave.
func (r *Run) attributeTags(stmts []handle.Statement, tagScripts map[string][][]string) {
	if len(stmts) == 0 || len(tagScripts) == 0 || len(r.tags) == 0 {
		return
	}
	own := attributed(stmts, tagScripts)
	for tag, t := range r.tags {
		t.ownFigures(own[tag], tagShared)
	}
}

// ownFigures replaces r's observed figures with its own where it has them,
// and says which of its per-request figures are not its own (why: whose
// they are instead).
func (r *Run) ownFigures(own map[string]float64, why string) {
	figs := map[string]float64{}
	for k, v := range r.d.Observed {
		figs[k] = v
	}
	for k, v := range own {
		figs[k] = v
	}
	r.d.Observed = figs
	r.d.Warnings = slices.DeleteFunc(r.d.Warnings, func(w string) bool { return w == r.sharedNote })
	r.sharedNote = ""
	var shared []string
	for k := range r.d.Observed {
		if _, mine := own[k]; !mine && strings.HasSuffix(k, "_per_req") {
			shared = append(shared, k)
		}
	}
	if len(shared) > 0 {
		sort.Strings(shared)
		r.sharedNote = fmt.Sprintf("%s: %s", strings.Join(shared, ", "), why)
		r.d.Warnings = append(r.d.Warnings, r.sharedNote)
	}
}
