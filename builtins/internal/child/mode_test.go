package child

import (
	"os"
	"strings"
	"testing"
)

// TestMain plays the benchbook binary's part: the first child starts the
// supervisor, which is this test binary re-executed in its mode.
func TestMain(m *testing.M) {
	RunMode(Supervisor)
	os.Exit(m.Run())
}

// TestModeCommandRefusesModesNotRun: a binary is started only in a mode
// it runs (RunMode); re-executed in another, a test binary would run its
// tests again instead.
func TestModeCommandRefusesModesNotRun(t *testing.T) {
	if _, err := ModeCommand("__not_a_mode"); err == nil || !strings.Contains(err.Error(), "does not run the hidden mode __not_a_mode") {
		t.Fatalf("ModeCommand of a mode not run: %v", err)
	}
	t.Setenv(MarkerVar, "outer-benchbook")
	cmd, err := ModeCommand(Supervisor.Arg, "x")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cmd.Args[1:], " "); got != Supervisor.Arg+" x" {
		t.Errorf("args %q", got)
	}
	for _, kv := range cmd.Env {
		if strings.HasPrefix(kv, MarkerVar+"=") {
			t.Errorf("a helper's environment keeps %s", kv)
		}
	}
	if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid {
		t.Error("a helper shares benchbook's process group")
	}
}

// TestWithoutMarker drops every MarkerVar entry, and nothing else.
func TestWithoutMarker(t *testing.T) {
	env := []string{"A=1", MarkerVar + "=x", MarkerVar + "X=keep", MarkerVar + "=y", "B=" + MarkerVar + "="}
	got := strings.Join(WithoutMarker(env), " ")
	if want := "A=1 " + MarkerVar + "X=keep B=" + MarkerVar + "="; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
