package workload

import (
	"context"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime"
)

// Every live target the notebook started is watched during every measured
// run, whether or not observe lists it (guard/targets.go): the one the run
// sends traffic to with its trips fatal, every other one as a bystander
// whose trips are warnings, observed or not (issue 33). observe adds
// figures; it is not what makes a target's trips count.

// withTargetGuards watches in obs every started target, and makes every
// observed target the traffic does not reach a bystander. dests are where
// the run sends its traffic (a concurrent group's scenarios: each of
// theirs); nil for workload.exec, whose command's traffic has no address
// we can see: there the observed targets stand for its own.
func withTargetGuards(th *starlark.Thread, obs []loadgen.Observer, dests ...*guard.Dest) []loadgen.Observer {
	obs = slices.Clone(obs)
	known := slices.ContainsFunc(dests, func(d *guard.Dest) bool { return d != nil })
	serves := func(t guard.Target) bool {
		return slices.ContainsFunc(dests, func(d *guard.Dest) bool { return d != nil && t.Serves(*d) })
	}
	for i, o := range obs {
		if t := targetOf(o); t != nil && known && !serves(t) {
			obs[i] = bystander{o}
		}
	}
	for _, t := range runtime.SessionValue(th, guard.TargetsKey, guard.NewTargets).Watched() {
		if observes(obs, t) {
			continue
		}
		var w guard.Watcher = t
		if !known || !serves(t) {
			if !t.Alive() {
				continue
			}
			w = guard.Bystander{Target: t}
		}
		obs = append(obs, guardOnly{w})
	}
	return obs
}

// targetOf is the target an observer watches: itself, or what its
// .watch(...) watches; nil for any other observer (the box, a host guard).
func targetOf(o loadgen.Observer) guard.Target {
	if b, ok := o.(bystander); ok {
		o = b.Observer
	}
	if t, ok := o.(guard.Target); ok {
		return t
	}
	if w, ok := o.(interface{ Watches() any }); ok {
		t, _ := w.Watches().(guard.Target)
		return t
	}
	return nil
}

// observes reports whether obs lists t, itself or through .watch(...).
func observes(obs []loadgen.Observer, t guard.Target) bool {
	for _, o := range obs {
		if got := targetOf(o); got != nil && any(got) == any(t) {
			return true
		}
	}
	return false
}

// bystander is an observed target the run sends no traffic to: its figures
// as observed, its trips as warnings.
type bystander struct{ loadgen.Observer }

func (b bystander) Watch(ctx context.Context, t0 time.Time) func() []guard.Trip {
	w, ok := b.Observer.(guard.Watcher)
	if !ok {
		return func() []guard.Trip { return nil }
	}
	return guard.Bystander{Target: w}.Watch(ctx, t0)
}

// guardOnly is a target the run watches without observing it: trips, no
// figures.
type guardOnly struct{ w guard.Watcher }

func (g guardOnly) Type() string { return "run guard" }

func (g guardOnly) StartObserving(context.Context) (func(int64) (map[string]float64, error), error) {
	return func(int64) (map[string]float64, error) { return nil, nil }, nil
}

func (g guardOnly) Watch(ctx context.Context, t0 time.Time) func() []guard.Trip {
	return g.w.Watch(ctx, t0)
}

// urlDest is where an HTTP run (or a MongoDB URI) sends its traffic.
func urlDest(raw string) *guard.Dest {
	u, err := url.Parse(raw)
	if err != nil {
		return &guard.Dest{}
	}
	host := u.Host
	if i := strings.IndexByte(host, ','); i >= 0 { // mongodb://a:1,b:2: the first
		host = host[:i]
	}
	d := &guard.Dest{Host: host}
	if h, p, err := net.SplitHostPort(host); err == nil {
		d.Host, d.Port = h, atoi(p)
	} else {
		d.Port = map[string]int{"http": 80, "https": 443, "mongodb": 27017}[u.Scheme]
	}
	return d
}

// sqlDest is where a SQL run sends its traffic: the handle, and its DSN's
// host and port or socket directory.
func sqlDest(db starlark.Value, dsn string) *guard.Dest {
	d := &guard.Dest{}
	if _, isString := db.(starlark.String); !isString {
		d.Target = db
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return d
	}
	if strings.HasPrefix(cfg.Host, "/") {
		d.Socket = cfg.Host
	} else {
		d.Host = cfg.Host
	}
	d.Port = int(cfg.Port)
	return d
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
