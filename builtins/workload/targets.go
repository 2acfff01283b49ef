package workload

import (
	"context"
	"net"
	"net/url"
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
// sends traffic to with its trips fatal, the others as bystanders whose
// trips are warnings. observe adds figures (and makes every trip of what
// it lists count).

// withTargetGuards adds to obs a guard for each started target it does not
// list; d is where the run sends its traffic.
func withTargetGuards(th *starlark.Thread, obs []loadgen.Observer, d guard.Dest) []loadgen.Observer {
	for _, t := range runtime.SessionValue(th, guard.TargetsKey, guard.NewTargets).Watched() {
		if observes(obs, t) {
			continue
		}
		var w guard.Watcher = t
		if !t.Serves(d) {
			if !t.Alive() {
				continue
			}
			w = guard.Bystander{Target: t}
		}
		obs = append(obs, guardOnly{w})
	}
	return obs
}

// observes reports whether obs lists t, itself or through .watch(...).
func observes(obs []loadgen.Observer, t guard.Target) bool {
	for _, o := range obs {
		if any(o) == any(t) {
			return true
		}
		if w, ok := o.(interface{ Watches() any }); ok && w.Watches() == any(t) {
			return true
		}
	}
	return false
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
func urlDest(raw string) guard.Dest {
	u, err := url.Parse(raw)
	if err != nil {
		return guard.Dest{}
	}
	host := u.Host
	if i := strings.IndexByte(host, ','); i >= 0 { // mongodb://a:1,b:2: the first
		host = host[:i]
	}
	d := guard.Dest{Host: host}
	if h, p, err := net.SplitHostPort(host); err == nil {
		d.Host, d.Port = h, atoi(p)
	} else {
		d.Port = map[string]int{"http": 80, "https": 443, "mongodb": 27017}[u.Scheme]
	}
	return d
}

// sqlDest is where a SQL run sends its traffic: the handle, and its DSN's
// host and port or socket directory.
func sqlDest(db starlark.Value, dsn string) guard.Dest {
	d := guard.Dest{}
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
