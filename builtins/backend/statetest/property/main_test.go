package property

import (
	"os"
	"testing"

	"github.com/benchbook/benchbook/builtins/hidden"
)

// TestMain runs the hidden modes the tests re-execute the test binary in
// (the supervisor of the clusters they start, the container reaper).
func TestMain(m *testing.M) {
	hidden.Run()
	os.Exit(m.Run())
}
