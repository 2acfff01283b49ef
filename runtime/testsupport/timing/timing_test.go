package timing

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Under -race, Only skips with the phrase .ci/test looks for; without it,
// the test runs. Both builds are checked whichever this one is, by running
// this package's tests again in the other mode.
func TestOnlySkipsUnderRace(t *testing.T) {
	if os.Getenv("TIMING_PROBE") != "" {
		Only(t, "probe")
		t.Log("ran")
		return
	}
	if testing.Short() {
		t.Skip("builds this package with and without -race")
	}
	for _, race := range []bool{false, true} {
		args := []string{"test", "-count=1", "-v", "-run", "^TestOnlySkipsUnderRace$"}
		if race {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, ".")...)
		cmd.Env = append(os.Environ(), "TIMING_PROBE=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
		skipped := strings.Contains(string(out), "--- SKIP") && strings.Contains(string(out), "probe ("+Phrase+")")
		ran := strings.Contains(string(out), "ran")
		if skipped != race || ran == race {
			t.Errorf("-race=%v: skipped %v, ran %v:\n%s", race, skipped, ran, out)
		}
	}
}

// .ci/test finds the timing tests by Phrase in its race pass's output: a
// phrase changed here and not there would run none of them.
func TestPhraseIsCITests(t *testing.T) {
	script, err := os.ReadFile("../../../.ci/test")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), `phrase="`+Phrase+`"`) {
		t.Errorf(".ci/test does not look for the tests skipped with %q", Phrase)
	}
}
