package runtime

import (
	"strings"
	"testing"
)

// TestCellOptionsAreChecked: a misspelt option ("cahce=false") or a value
// the option does not take ("cache=maybe") was ignored, so the cell was
// cached when its author said it must not be. Each is now an error naming
// the file, the header's line, the cell and the options there are.
func TestCellOptionsAreChecked(t *testing.T) {
	for _, tc := range []struct{ header, want string }{
		{"# %% a cahce=false", `nb.star:2: cell a: unknown option cahce=false (the options: cache=true, cache=false)`},
		{"# %% a cache=maybe", `nb.star:2: cell a: cache=maybe: want cache=true or cache=false`},
		{"# %% cache=no", `nb.star:2: cell cell2: cache=no: want cache=true or cache=false`},
		{"# %% a Cache=false", `unknown option Cache=false`},
	} {
		_, err := Parse("nb.star", []byte("x = 0\n"+tc.header+"\ny = 1\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.header, err, tc.want)
		}
	}
	for _, header := range []string{"# %% a cache=false", "# %% a cache=true", "# %% a cache='false'", "# %% a"} {
		if _, err := Parse("nb.star", []byte("x = 0\n"+header+"\ny = 1\n")); err != nil {
			t.Errorf("%s: %v", header, err)
		}
	}
}
