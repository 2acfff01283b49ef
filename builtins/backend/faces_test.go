package backend_test

import (
	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/workload"
	"github.com/benchbook/benchbook/runtime"
)

// The faces are what their consumers take, checked when this package's
// tests build: an Observer (and a .watch() of a Logged handle) is what
// workload's observe = [...] takes, a Guarded handle is a run guard's
// target, a Stateful one a runtime.StateHolder for memo keys.
var (
	_ workload.Observer   = handle.Observer(nil)
	_ workload.Observer   = (*kit.Watched)(nil)
	_ guard.Target        = handle.Guarded(nil)
	_ guard.Watcher       = (*kit.Watched)(nil)
	_ runtime.StateHolder = handle.Stateful(nil)
)
