package display

import (
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// TestStarlark runs every testdata/*.star file.
func TestStarlark(t *testing.T) {
	startest.RunFiles(t, "testdata/*.star", func(*testing.T) startest.Options {
		return startest.Options{Modules: []runtime.Module{Module()}}
	})
}

func TestTableCodecRoundTrip(t *testing.T) {
	orig := NewTable([]string{"arm", "rps", "tags", "none"}, [][]starlark.Value{
		{starlark.String("A"), starlark.Float(1234.5), starlark.NewList([]starlark.Value{starlark.String("x")}), starlark.None},
		{starlark.String("B"), starlark.MakeInt(7), Markdown("*a cell the decoders decode*")},
	})
	data, err := codec.Encode(starlark.NewList([]starlark.Value{orig, Markdown("# t")}))
	if err != nil {
		t.Fatal(err)
	}
	v, err := codec.Decode(data, Module().Decoders)
	if err != nil {
		t.Fatal(err)
	}
	list := v.(*starlark.List)
	got, ok := list.Index(0).(*Table)
	if !ok {
		t.Fatalf("decoded %s, want table", list.Index(0).Type())
	}
	if got.String() != orig.String() || got.CSV() != orig.CSV() {
		t.Errorf("round trip changed the table:\n%s\nwant\n%s", got, orig)
	}
	if eq, err := starlark.Equal(got.Index(0), orig.Index(0)); err != nil || !eq {
		t.Errorf("row 0 = %s, want %s", got.Index(0), orig.Index(0))
	}
	if list.Index(1) != Markdown("# t") {
		t.Errorf("markdown round trip = %v", list.Index(1))
	}
}

func TestDedent(t *testing.T) {
	got := dedent("\n    # Title\n\n      indented\n    text\n  ")
	if want := "# Title\n\n  indented\ntext\n"; got != want {
		t.Errorf("dedent = %q, want %q", got, want)
	}
}
