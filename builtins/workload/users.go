package workload

import (
	"fmt"
	"math"
	goruntime "runtime"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// Simulated users: users = N, think = "1s" | "exp(1s)" is a closed loop of
// N users who wait a think time between the outcome of one request and
// the start of their next (loadgen/think.go); clients = N are users who do
// not think. A run of users records what arrived: think_ms (the think they
// took), arrival_rps and arrival_cv (the gaps between the starts they
// intended), and late (requests the generator sent more than 10 ms after
// their user's think ended).

// maxThink bounds a think time: a typo of "1h" for "1s" would leave a run
// with nothing to measure.
const maxThink = time.Hour

// thinkArg is the think argument: a duration (constant think time) or
// "exp(DURATION)" (exponential with that mean, seeded).
type thinkArg struct {
	d     time.Duration
	exp   bool
	given bool
}

func (t *thinkArg) Unpack(v starlark.Value) error {
	t.given = true
	if s, ok := v.(starlark.String); ok {
		if inner, ok := strings.CutPrefix(strings.TrimSpace(string(s)), "exp("); ok {
			inner, ok = strings.CutSuffix(inner, ")")
			var d starval.Duration
			if !ok || d.Unpack(starlark.String(inner)) != nil {
				return fmt.Errorf(`malformed think %s (want a duration such as "1s", or "exp(1s)" for exponential think times with that mean)`, s)
			}
			t.d, t.exp = time.Duration(d), true
			return t.check()
		}
	}
	var d starval.Duration
	if err := d.Unpack(v); err != nil {
		if s, ok := v.(starlark.String); ok {
			return fmt.Errorf(`malformed think %s (want a duration such as "1s", or "exp(1s)" for exponential think times with that mean)`, s)
		}
		return err
	}
	t.d = time.Duration(d)
	return t.check()
}

func (t *thinkArg) check() error {
	if t.d > maxThink {
		return fmt.Errorf("think must be at most %s, got %s", maxThink, t.d)
	}
	if t.exp && t.d == 0 {
		return fmt.Errorf("think: exp(0) has no mean; give 0 for no think time")
	}
	return nil
}

// String is the think as a run shows it: "1s", "exp(1s)", "" for none.
func (t thinkArg) String() string {
	switch {
	case t.d == 0:
		return ""
	case t.exp:
		return "exp(" + t.d.String() + ")"
	}
	return t.d.String()
}

// users sets a closed loop of users (users, think) on s; ok is false when
// the call gave neither.
func (a *loadArgs) usersShape(name string, s *loadgen.Spec) (ok bool, err error) {
	hasUsers := a.users != starlark.None
	switch {
	case !hasUsers && !a.think.given:
		return false, nil
	case !hasUsers && a.clients != starlark.None:
		return false, fmt.Errorf("%s: think applies to users: give users = N (clients = N are users that do not think)", name)
	case !hasUsers:
		return false, fmt.Errorf("%s: think applies to users (a closed loop): give users = N", name)
	case a.clients != starlark.None:
		return false, fmt.Errorf("%s: give users or clients, not both (clients = N are users that do not think)", name)
	case a.rate != starlark.None:
		return false, fmt.Errorf("%s: give users (closed loop) or rate (open loop), not both", name)
	case a.tick.given:
		return false, fmt.Errorf("%s: tick applies to an open loop (rate), not to users", name)
	}
	n, err := starlark.AsInt32(a.users)
	if err != nil || n <= 0 {
		return false, fmt.Errorf("%s: users must be an int > 0, got %s", name, a.users)
	}
	s.Clients, s.Think, s.ThinkExp = n, a.think.d, a.think.exp
	return true, nil
}

// thinkText is the think a spec gives its users, as a run shows it.
func thinkText(s loadgen.Spec) string {
	return thinkArg{d: s.Think, exp: s.ThinkExp}.String()
}

// thinkMs is the mean think the users took before the window's requests,
// ms; 0 without think.
func (r *Run) thinkMs() float64 {
	if r.d.Thinks == 0 {
		return 0
	}
	return inUnits(r.d.Result.Think, time.Millisecond) / float64(r.d.Thinks)
}

// arrivalRPS is the requests started (closed loop) or due (open loop) per
// second of the window.
func (r *Run) arrivalRPS() float64 {
	if s := r.d.Measured.Seconds(); s > 0 {
		return float64(r.d.Intended) / s
	}
	return 0
}

// errorRate is the share of the window's requests that failed or were
// dropped, of those decided.
func (r *Run) errorRate() float64 {
	failed := sumErrors(r.d.Errors) + r.d.Dropped
	if decided := r.d.Count + failed; decided > 0 {
		return float64(failed) / float64(decided)
	}
	return 0
}

// genShare is the generator's CPU over the window as a share of the CPUs
// it may use: this process's (GOMAXPROCS), or a fleet's busiest agent's.
// NaN for exec, and for a run stored before runs kept it.
func genShare(kind string, res *loadgen.Result, agents []agentRow) float64 {
	if kind == "exec" {
		return math.NaN()
	}
	if len(agents) > 0 {
		hi := 0.0
		for _, a := range agents {
			hi = max(hi, a.CPUShare)
		}
		return hi
	}
	if res.Measured <= 0 {
		return 0
	}
	return res.CPU.Seconds() / (res.Measured.Seconds() * float64(goruntime.GOMAXPROCS(0)))
}

// thinkLag is the median delay, ms, from the end of a user's think to
// the send of its request (the generator's lateness, Result.Lag in a
// closed loop); 0 without think. The median, not the mean: a busy box that
// stalls every thread for 50 ms now and then (the target's too) makes a
// tail that the busy flag reports, while a generator that cannot keep up
// is late for most requests.
func thinkLag(spec loadgen.Spec, res *loadgen.Result) float64 {
	if spec.Think == 0 || spec.Clients == 0 || res.Lag == nil || res.Lag.TotalCount() == 0 {
		return 0
	}
	return loadgen.QuantileMs(res.Lag, 50)
}

// MaxThinkLagShare is the share of a user's cycle (response and think)
// that the generator's lateness may take before the run counts as
// generator-bound: the users then offered that much less than asked.
const MaxThinkLagShare = 0.02

// thinkLagShare is the users' median send delay over their mean cycle.
func (r *Run) thinkLagShare() float64 {
	cycle := r.d.Hist.Mean()/1000 + r.thinkMs()
	if r.d.Think == "" || cycle <= 0 {
		return 0
	}
	return r.d.ThinkLagMs / cycle
}

// genBound says whether the generator, not the target, may have set the
// pace: its CPU at SaturatedShare of its CPUs or more (a fleet: an agent
// saturated), or users whose requests it typically sent late by more than
// MaxThinkLagShare of their cycle (only the generator delays those: the
// user's connection was idle). A capacity search refuses a
// crossing that a generator-bound run made.
func (r *Run) genBound() bool {
	if r.d.GenShare >= fleet.SaturatedShare {
		return true
	}
	for _, a := range r.d.Agents {
		if a.Saturated {
			return true
		}
	}
	return r.thinkLagShare() > MaxThinkLagShare
}
