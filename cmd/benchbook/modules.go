package main

import (
	"github.com/benchbook/benchbook/builtins/backend"
	"github.com/benchbook/benchbook/builtins/display"
	"github.com/benchbook/benchbook/builtins/export"
	"github.com/benchbook/benchbook/builtins/gocode"
	"github.com/benchbook/benchbook/builtins/host"
	"github.com/benchbook/benchbook/builtins/http"
	"github.com/benchbook/benchbook/builtins/metric"
	"github.com/benchbook/benchbook/builtins/plot"
	"github.com/benchbook/benchbook/builtins/workload"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/stdlib"
)

// The builtin modules a notebook sees, listed by hand in this one place
// (as k6's internal/js/jsmodules.go lists its modules, and go.starlark.net's
// cmd/starlark predeclares its own): the engine imports none of them, and
// a module is one line here.
func modules() []runtime.Module {
	return []runtime.Module{
		display.Module(),
		host.Module(),
		http.Module(),
		export.Module(),
		plot.Module(),
		gocode.Module(),
		metric.Module(),
		workload.Module(workload.Options{Kubernetes: kubernetesLauncher}),
		backend.Module(),
	}
}

// withModules is opts with benchbook's modules and its embedded stdlib
// ("@std/abab.star"): every engine the binary opens gets them here.
func withModules(opts runtime.Options) runtime.Options {
	opts.Modules = modules()
	opts.Stdlib = stdlib.FS
	return opts
}
