package kit

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/handle"
)

// This file holds .watch(count = {...}, allow = [...]) of a process, a
// container or a cluster: the target with log rules, to pass in
// observe = [...] instead of the target, which adds log counters and an
// allow-list to its run guard.

var (
	_ guard.Watcher   = (*Watched)(nil)
	_ handle.Preparer = (*Watched)(nil)
)

// Watched is the value of .watch(count = {...}, allow = [...]).
type Watched struct {
	target handle.Logged
	rules  guard.LogRules
}

func (w *Watched) String() string        { return fmt.Sprintf("<watched %s>", w.target.String()) }
func (w *Watched) Type() string          { return "watched" }
func (w *Watched) Freeze()               {}
func (w *Watched) Truth() starlark.Bool  { return true }
func (w *Watched) Hash() (uint32, error) { return 0, errors.New("unhashable type: watched") }

// StartObserving gives the target's figures plus, for each count pattern,
// NAME (lines over the window) and NAME_per_req.
func (w *Watched) StartObserving(ctx context.Context) (handle.Stop, error) {
	stop, err := w.target.StartObserving(ctx)
	if err != nil {
		return nil, err
	}
	return w.counting(ctx, stop), nil
}

// PrepareObserving prepares the target's window when it can be prepared
// (handle.Preparer); the log counting starts when the window opens.
func (w *Watched) PrepareObserving(ctx context.Context) (open func() (handle.Stop, error), cancel func(), err error) {
	p, ok := w.target.(handle.Preparer)
	if !ok {
		return func() (handle.Stop, error) { return w.StartObserving(ctx) }, func() {}, nil
	}
	topen, cancel, err := p.PrepareObserving(ctx)
	if err != nil {
		return nil, nil, err
	}
	return func() (handle.Stop, error) {
		stop, err := topen()
		if err != nil {
			return nil, err
		}
		return w.counting(ctx, stop), nil
	}, cancel, nil
}

// counting adds the log counters to a window's figures from now on.
func (w *Watched) counting(ctx context.Context, stop handle.Stop) handle.Stop {
	count := guard.CountLog(ctx, w.rules, w.target.Lines())
	return func(requests int64) (map[string]float64, error) {
		figs, err := stop(requests)
		if figs == nil {
			figs = map[string]float64{}
		}
		for k, v := range count(requests) {
			figs[k] = v
		}
		return figs, err
	}
}

// Watches is the target the rules apply to: observe = [pg.watch(...)]
// observes pg.
func (w *Watched) Watches() any { return w.target }

// Watch is the target's watch with the rules.
func (w *Watched) Watch(ctx context.Context, t0 time.Time) func() []guard.Trip {
	return w.target.WatchLog(ctx, t0, w.rules)
}

// WatchMethod is .watch(count = {name: regex}, allow = [regex]) on t.
func WatchMethod(t handle.Logged, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var count *starlark.Dict
	var allow *starlark.List
	if err := starlark.UnpackArgs(name, args, kwargs, "count?", &count, "allow?", &allow); err != nil {
		return nil, err
	}
	w := &Watched{target: t, rules: guard.LogRules{Count: map[string]*regexp.Regexp{}}}
	if count != nil {
		for _, kv := range count.Items() {
			k, ok1 := starlark.AsString(kv[0])
			v, ok2 := starlark.AsString(kv[1])
			if !ok1 || !ok2 || k == "" {
				return nil, fmt.Errorf("%s: count must map names to regular expressions, got %s: %s", name, kv[0].Type(), kv[1].Type())
			}
			re, err := regexp.Compile(v)
			if err != nil {
				return nil, fmt.Errorf("%s: count[%q]: %w", name, k, err)
			}
			w.rules.Count[k] = re
		}
	}
	if allow != nil {
		for i := range allow.Len() {
			v, ok := starlark.AsString(allow.Index(i))
			if !ok {
				return nil, fmt.Errorf("%s: allow[%d] must be a regular expression string, got %s", name, i, allow.Index(i).Type())
			}
			re, err := regexp.Compile(v)
			if err != nil {
				return nil, fmt.Errorf("%s: allow[%d]: %w", name, i, err)
			}
			w.rules.Allow = append(w.rules.Allow, re)
		}
	}
	return w, nil
}
