package kit

import (
	"fmt"
	"math/big"
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

// Query arguments go to the drivers as Go scalars; an int past int64 as its
// digits, a container not at all.
func TestToGo(t *testing.T) {
	big70 := new(big.Int).Lsh(big.NewInt(1), 70)
	for _, c := range []struct {
		in   starlark.Value
		want any
	}{
		{starlark.None, nil}, {starlark.True, true}, {starlark.MakeInt(-3), int64(-3)},
		{starlark.MakeBigInt(big70), "1180591620717411303424"}, {starlark.Float(2.5), 2.5},
		{starlark.String("s"), "s"}, {starlark.Bytes("\x00b"), []byte("\x00b")},
	} {
		got, err := ToGo(c.in)
		if err != nil || fmt.Sprintf("%T %v", got, got) != fmt.Sprintf("%T %v", c.want, c.want) {
			t.Errorf("ToGo(%s) = %T %v, %v; want %T %v", c.in, got, got, err, c.want, c.want)
		}
	}
	if _, err := ToGo(starlark.NewList(nil)); err == nil {
		t.Error("a list passed as a query argument")
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
