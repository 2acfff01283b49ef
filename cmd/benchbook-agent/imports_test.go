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
//   - a module imports no other module: a module is a top-level folder of
//     builtins/ other than internal/ (backend, display, metric, workload...),
//     and a package in one imports only its own module's packages,
//     builtins/internal/..., runtime/... and outside libraries; what modules
//     share lives below them, in builtins/internal/<thing>. The exceptions
//     are the test harnesses (testHarnesses), which run several modules
//     together and which only _test.go files import (checked here);
//   - the Starlark-free libraries (starlarkFree) link no Starlark, so the
//     agents, bench/ and other programs can use them without an
//     interpreter.
//
// pendingUpward are the arrows that still run up, each to be moved by
// issue 35's step 4; the test fails on any other, and on an entry here that
// no longer exists (then delete it).
const module = "github.com/benchbook/benchbook/"

var starlarkFree = []string{
	"builtins/internal/cgroup", "builtins/internal/child", "builtins/internal/cpusample",
	"builtins/internal/demotarget", "builtins/internal/docker", "builtins/internal/flame",
	"builtins/internal/fmtnum", "builtins/internal/guard", "builtins/internal/hgrm",
	"builtins/internal/metricname",
	"builtins/internal/profile", "builtins/internal/runattrs",
	"builtins/metric/gate",
	"builtins/workload/fleet", "builtins/workload/fleet/kube", "builtins/workload/loadgen",
	"builtins/workload/loadgen/h1wire", "builtins/workload/loadgen/mongowire", "builtins/workload/loadgen/netpoll", "builtins/workload/loadgen/pgwire",
	"runtime/bytesize", "runtime/filehash", "runtime/hostinfo", "runtime/procfs", "runtime/record/svgtext", "runtime/resstate", "runtime/stats",
}

var pendingUpward = []string{}

// testHarnesses are packages under a module that drive several modules
// together for tests (the backend conformance suite, the state property
// tests): exempt from the module rule, so long as no package but a test
// imports them.
var testHarnesses = []string{"builtins/backend/backendtest", "builtins/backend/statetest"}

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
			to, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if runsUp(from, to) {
				upward = append(upward, from+" -> "+to)
			}
			if crossesModules(from, to) && !harness(from) {
				t.Errorf("a module imports another module: %s -> %s (move what they share into builtins/internal/<thing>)", from, to)
			}
			if harness(to) {
				t.Errorf("%s imports the test harness %s, which only tests may import", from, to)
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

// moduleOf is the module a module-relative package path belongs to (its
// top-level folder under builtins/), or "" for a package in none.
func moduleOf(p string) string {
	rest, ok := strings.CutPrefix(p, "builtins/")
	if !ok {
		return ""
	}
	m, _, _ := strings.Cut(rest, "/")
	if m == "internal" {
		return ""
	}
	return m
}

// crossesModules says whether from and to are packages of two different
// modules.
func crossesModules(from, to string) bool {
	mf, mt := moduleOf(from), moduleOf(to)
	return mf != "" && mt != "" && mf != mt
}

// harness says whether p is one of the test harnesses or a package under one.
func harness(p string) bool {
	return slices.ContainsFunc(testHarnesses, func(h string) bool { return p == h || strings.HasPrefix(p, h+"/") })
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
