package workload

import (
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime"
)

// load is one workload.http, sql or mongo call, ready: its spec, where its
// traffic goes, its target, and how its result becomes a run. It runs now
// (run), or, inside workload.concurrent's scenario functions, joins the
// group, which runs every scenario's at one instant (concurrent.go).
type load struct {
	name   string // the builtin's
	la     *loadArgs
	spec   loadgen.Spec
	dest   *guard.Dest
	tgt    loadgen.Target // nil for a run on agents
	close  func()         // releases the target (a pool)
	finish func(res *loadgen.Result, warm *warmed) *Run
	fleet  *fleetLoad // agents = ...: what the agents run; tgt is nil
	// scripts are the scripts each tag runs (nil without a mix), and all
	// the load's: what attributes a server's per-statement figures
	// (attribute.go); nil for a load that is not SQL.
	scripts func() (map[string][][]string, [][]string)
}

// run measures the load now, or hands it to the workload.concurrent
// whose scenario function called the builtin.
func (l *load) run(th *starlark.Thread) (starlark.Value, error) {
	if c := collecting(th); c != nil {
		return c.add(th, l)
	}
	if l.close != nil {
		defer l.close()
	}
	var sink statementSink
	ctx := sink.context(runtime.Context(th))
	if l.fleet != nil {
		return profiled(th, l.name, l.la, &l.spec, l.dest, func() (starlark.Value, error) {
			run, err := l.fleet.run(ctx, l.name, l.spec, nil)
			if err == nil {
				l.attribute(run, sink.statements())
			}
			return run, err
		})
	}
	prof, err := l.la.profile.start(l.name, th, l.la.observe, l.dest)
	if err != nil {
		return nil, err
	}
	l.spec.Observers = prof.observing(l.spec.Observers)
	res, warm := l.la.measure(ctx, l.spec, l.tgt)
	run := l.finish(res, warm)
	l.attribute(run, sink.statements())
	return run, prof.attach(run)
}

// attribute gives the run's tags the figures of their own statements.
func (l *load) attribute(run *Run, stmts []handle.Statement) {
	if l.scripts == nil {
		return
	}
	tags, _ := l.scripts()
	run.attributeTags(stmts, tags)
}
