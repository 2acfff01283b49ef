package main

// Every builtin module registers itself with the runtime from init.
import (
	_ "github.com/benchbook/benchbook/builtins/backend"
	_ "github.com/benchbook/benchbook/builtins/display"
	_ "github.com/benchbook/benchbook/builtins/export"
	_ "github.com/benchbook/benchbook/builtins/gocode"
	_ "github.com/benchbook/benchbook/builtins/host"
	_ "github.com/benchbook/benchbook/builtins/metric"
	_ "github.com/benchbook/benchbook/builtins/plot"
	_ "github.com/benchbook/benchbook/builtins/workload"
)
