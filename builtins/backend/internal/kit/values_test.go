package kit

import (
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

func TestReadOnly(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT 1": true, " select * from t": true, "SHOW work_mem": true, "EXPLAIN SELECT 1": true,
		"EXPLAIN ANALYZE INSERT INTO t VALUES (1)": false, "INSERT INTO t VALUES (1) RETURNING id": false,
		"SELECT nextval('s')": false, "SELECT * INTO t2 FROM t": false, "WITH x AS (DELETE FROM t RETURNING *) SELECT 1": false,
	} {
		if got := ReadOnly(sql); got != want {
			t.Errorf("ReadOnly(%q) = %v, want %v", sql, got, want)
		}
	}
}

// program is an Executable other than build's binary: kit reads the
// interface, not the build kind.
type program string

func (p program) Path() string          { return "/bin/" + string(p) }
func (p program) String() string        { return "<program " + string(p) + ">" }
func (p program) Type() string          { return "program" }
func (p program) Freeze()               {}
func (p program) Truth() starlark.Bool  { return true }
func (p program) Hash() (uint32, error) { return starlark.String(p).Hash() }

func TestArgvTakesExecutables(t *testing.T) {
	for _, c := range []struct {
		cmd  starlark.Value
		want string
	}{
		{program("true"), "/bin/true"},
		{starlark.NewList([]starlark.Value{program("env"), starlark.String("-i")}), "/bin/env -i"},
		{starlark.String("sleep 1"), "sleep 1"},
	} {
		argv, err := Argv(c.cmd)
		if err != nil || strings.Join(argv, " ") != c.want {
			t.Errorf("Argv(%s) = %q, %v; want %q", c.cmd, argv, err, c.want)
		}
	}
	if _, err := Argv(starlark.NewList([]starlark.Value{starlark.MakeInt(1)})); err == nil || !strings.Contains(err.Error(), "string or binary") {
		t.Errorf("Argv of an int element: %v", err)
	}
}
