package needs

import (
	"fmt"
	"strings"
	"testing"
)

// recorder plays a testing.T and keeps whether it was skipped or failed.
type recorder struct{ skipped, failed string }

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

// A missing tool skips a developer's test but fails CI's, and both say
// what to install.
func TestMissingFailsOnlyUnderCI(t *testing.T) {
	for _, ci := range []string{"", "false", "true", "1"} {
		t.Setenv("CI", ci)
		r := &recorder{}
		Missing(r, "frobnicator", "apt-get install frob")
		underCI := ci == "true" || ci == "1"
		got := r.skipped
		if underCI {
			got = r.failed
		}
		if (r.failed != "") != underCI || (r.skipped != "") == underCI || !strings.Contains(got, "apt-get install frob") {
			t.Errorf("CI=%q: skipped %q, failed %q", ci, r.skipped, r.failed)
		}
	}
}

// Under CI, the tools .ci/run installs are there: this is the test that
// fails when CI would otherwise skip the PostgreSQL and browser suites.
func TestCIHasItsTools(t *testing.T) {
	if !CI() {
		t.Skip("checks CI's machine (CI=true)")
	}
	Postgres(t)
	Chromium(t)
}
