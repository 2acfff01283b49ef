package runtime

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDeepInputsToRecursiveBuiltins: json.decode of a text nested 3
// million deep and json.encode of a dict nested 1.5 million deep crashed
// the process (Go's "fatal error: stack overflow", no position), and str()
// of a list nested 200,000 deep ran for half a minute, deaf to signals.
// (The encode case here is 5,000 deep: building 1.5 million dicts takes
// 20 s; the check refuses both at the same 1001st level.) Each is now an error of the cell naming the builtin, the limit and
// notebook.star:line:col, within seconds.
func TestDeepInputsToRecursiveBuiltins(t *testing.T) {
	deepList := "def deep(n):\n    x = []\n    for i in range(n):\n        x = [x]\n    return x\n"
	for _, tc := range []struct{ name, src, want, at string }{
		{"decode", "s = '[' * 3000000 + ']' * 3000000\nv = json.decode(s)\n", `json.decode: nested too deeply: JSON nested more than 1000 levels at line 1, column 1001`, "nb.star:3:16"},
		{"decode-default", "s = '{\"a\":' * 3000000\nv = json.decode(s, None)\n", `json.decode: nested too deeply`, "nb.star:3:16"},
		{"encode", "def f():\n    d = {}\n    cur = d\n    for i in range(5000):\n        n = {}\n        cur['k'] = n\n        cur = n\n    return json.encode(d)\ns = f()\n", `json.encode: nested too deeply: more than 1000 levels`, "nb.star:9:23"},
		{"encode_indent", deepList + "s = json.encode_indent(deep(5000))\n", `json.encode_indent: nested too deeply`, "nb.star:7:23"},
		{"str", deepList + "s = str(deep(200000))\n", `str: nested too deeply: more than 1000 levels \(value depth limit 1000, raise it with BENCHBOOK_MAX_DEPTH\)`, "nb.star:7:8"},
		{"repr", deepList + "s = repr(deep(200000))\n", `repr: nested too deeply`, "nb.star:7:9"},
		{"print", deepList + "print('a', deep(200000))\n", `print: nested too deeply`, "nb.star:7:6"},
		{"shared", // a DAG that str() would print 2^100 times
			"x = []\nfor i in range(100):\n    x = [x, x]\ns = str(x)\n", `str: over the limit: more than 1048576 values to show \(value size limit`, "nb.star:5:8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("BENCHBOOK_MAX_VALUE", "1M")
			start := time.Now()
			r := runNotebook(t, t.TempDir(), "# %% a\n"+tc.src, Options{})
			st := r.e.CellRun("a")
			if st.Err == nil || !regexpMatch(tc.want, st.Err.Error()) || !strings.Contains(st.Err.Error()+st.Trace, tc.at) {
				t.Errorf("err %v\ntrace %s\nwant %q at %s", st.Err, st.Trace, tc.want, tc.at)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestShowableStillShowsWhatStarlarkDoes: the checks refuse nothing that
// is within the limits: a cycle prints as Starlark prints it, a value
// 1000 deep prints, JSON 1000 deep decodes, a bracket in a string is not
// nesting.
func TestShowableStillShowsWhatStarlarkDoes(t *testing.T) {
	src := `# %% a
_l = [1]
_l.append(_l)
_d = {"k": _l}
_d["d"] = _d
s1 = str(_l)
s2 = repr(_d)
_x = []
for i in range(999):
    _x = [_x]
s3 = str(_x)
v = json.decode("[" * 1000 + "]" * 1000)
w = json.decode('["' + "[" * 5000 + '"]')
e = json.encode(_x)
print(_l, _d, sep = ";")
`
	r := runNotebook(t, t.TempDir(), src, Options{})
	st := r.e.CellRun("a")
	if st.Err != nil {
		t.Fatalf("err %v\n%s", st.Err, st.Trace)
	}
	if !strings.Contains(r.outputs["a"], `[1, [...]];{"k": [1, [...]], "d": {...}}`) {
		t.Errorf("outputs %q", r.outputs["a"])
	}
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
