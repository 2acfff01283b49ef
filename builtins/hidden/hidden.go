// Package hidden is the one table of benchbook's hidden modes: the binary
// re-executed by itself to do one job in a process of its own, named by a
// hidden first argument (child.Mode):
//
//	__supervise MARKER DIR    kills what benchbook's children left when it
//	                          dies (builtins/internal/child)
//	__reap_containers TOKEN   removes its containers when it dies
//	                          (builtins/internal/docker)
//	__demo FLAGS              serves the demo target
//	                          (builtins/internal/demotarget)
//
// cmd/benchbook's main calls Run first. So does the TestMain of a test
// binary whose tests start children, containers or the demo: re-executed
// as a helper, it must do the helper's job, not run its tests again (a
// binary that has not called Run refuses to start one: child.ModeCommand).
package hidden

import (
	"github.com/benchbook/benchbook/builtins/internal/child"
	"github.com/benchbook/benchbook/builtins/internal/demotarget"
	"github.com/benchbook/benchbook/builtins/internal/docker"
)

// Run runs the hidden mode this process was started in and exits, or
// returns when it was started in none.
func Run() { child.RunMode(child.Supervisor, docker.Reaper, demotarget.Mode) }
