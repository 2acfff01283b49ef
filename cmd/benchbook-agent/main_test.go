package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The agent links no Starlark and none of the engine's renderers: a load
// box runs the generator and the fleet protocol only.
func TestAgentLinksNoEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"go.starlark.net", "github.com/yuin/goldmark", "github.com/alecthomas/chroma",
			"github.com/benchbook/benchbook/runtime"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") && dep != "github.com/benchbook/benchbook/runtime/filehash" {
				t.Errorf("the agent links %s", dep)
			}
		}
	}
}
