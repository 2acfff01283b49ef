package main

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The module's import rules (issue 35), checked over what go list says
// every package imports (tests left out). The agent's rule above is one
// of them; these hold for every package:
//
//   - the engine imports no builtin: nothing under runtime/ imports
//     builtins/, cmd/ or bench/, and nothing under builtins/ imports cmd/
//     or bench/;
//   - the shared pieces sit below the modules: builtins/internal/...
//     imports no builtins package outside builtins/internal;
//   - the Starlark-free libraries (starlarkFree) link no Starlark, so the
//     agents, bench/ and other programs can use them without an
//     interpreter.
//
// pendingUpward are the arrows that still run up, each to be moved by
// issue 35's step 4; the test fails on any other, and on an entry here that
// no longer exists (then delete it).
const module = "github.com/benchbook/benchbook/"

var starlarkFree = []string{
	"builtins/internal/cgroup", "builtins/internal/child", "builtins/internal/docker",
	"builtins/internal/flame", "builtins/internal/guard", "builtins/internal/metricname",
	"builtins/internal/profile", "builtins/internal/runattrs",
	"builtins/metric/gate", "builtins/metric/stats",
	"builtins/workload/fleet", "builtins/workload/fleet/kube", "builtins/workload/loadgen",
	"runtime/bytesize", "runtime/filehash", "runtime/hostinfo", "runtime/procfs", "runtime/record/svgtext", "runtime/resstate",
}

var pendingUpward = []string{}

type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func TestImportRules(t *testing.T) {
	pkgs := goList(t)
	var upward []string
	for _, p := range pkgs {
		from, ok := strings.CutPrefix(p.ImportPath, module)
		if !ok {
			continue
		}
		for _, imp := range p.Imports {
			if to, ok := strings.CutPrefix(imp, module); ok && runsUp(from, to) {
				upward = append(upward, from+" -> "+to)
			}
		}
		if slices.Contains(starlarkFree, from) {
			for _, d := range p.Deps {
				if strings.HasPrefix(d, "go.starlark.net") {
					t.Errorf("%s is one of the Starlark-free libraries, and links %s", from, d)
					break
				}
			}
		}
	}
	for _, u := range upward {
		if !slices.Contains(pendingUpward, u) {
			t.Errorf("an import runs up the layers: %s", u)
		}
	}
	for _, u := range pendingUpward {
		if !slices.Contains(upward, u) {
			t.Errorf("%s is gone: delete it from pendingUpward", u)
		}
	}
	for _, p := range starlarkFree {
		if !slices.ContainsFunc(pkgs, func(l listed) bool { return l.ImportPath == module+p }) {
			t.Errorf("starlarkFree names %s, which go list does not know", p)
		}
	}
}

// runsUp says whether from (a module-relative path) may not import to.
func runsUp(from, to string) bool {
	under := func(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	internal := func(p string) bool { return under(p, "builtins/internal") }
	switch {
	case under(from, "runtime"):
		return under(to, "builtins") || under(to, "cmd") || under(to, "bench")
	case internal(from):
		return under(to, "builtins") && !internal(to) || under(to, "cmd") || under(to, "bench")
	case under(from, "builtins"):
		return under(to, "cmd") || under(to, "bench")
	}
	return false
}

// goList lists every package of the module with its imports and deps.
func goList(t *testing.T) []listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", "../../...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}
