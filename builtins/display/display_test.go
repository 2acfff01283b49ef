package display

import (
	"strings"
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

func TestTableNotStorable(t *testing.T) {
	fn := starlark.NewBuiltin("f", nil)
	_, err := codec.Encode(NewTable([]string{"f"}, [][]starlark.Value{{fn}}))
	if err == nil || !strings.Contains(err.Error(), "cannot be stored") {
		t.Fatalf("encode of a table holding a function: err = %v, want not storable", err)
	}
}

func TestTableHTMLEscapesAndAligns(t *testing.T) {
	tb := NewTable([]string{"<b>name</b>", "n"}, [][]starlark.Value{
		{starlark.String("<script>alert(1)</script>"), starlark.MakeInt(12345)},
		{starlark.String("b"), starlark.None},
	})
	h := tb.HTML()
	if strings.Contains(h, "<script>") || strings.Contains(h, "<b>") {
		t.Errorf("unescaped notebook text in %s", h)
	}
	if !strings.Contains(h, `<td class="num">12,345</td>`) {
		t.Errorf("number not right-aligned with separators: %s", h)
	}
	md := tb.Markdown()
	if !strings.Contains(md, "| --- | ---: |") || strings.Contains(md, "<script>") {
		t.Errorf("markdown table: %s", md)
	}
}

func TestLongTableIsCut(t *testing.T) {
	rows := make([][]starlark.Value, maxShownRows+5)
	for i := range rows {
		rows[i] = []starlark.Value{starlark.MakeInt(i)}
	}
	tb := NewTable([]string{"i"}, rows)
	if got := strings.Count(tb.HTML(), "<tr>"); got != maxShownRows+1 {
		t.Errorf("html rows = %d, want %d", got, maxShownRows+1)
	}
	if !strings.Contains(tb.HTML(), "5 more rows") {
		t.Error("html does not say rows were left out")
	}
	if got := strings.Count(tb.CSV(), "\n"); got != maxShownRows+6 {
		t.Errorf("csv lines = %d, want every row", got)
	}
}

func TestFormatFloat(t *testing.T) {
	for in, want := range map[float64]string{
		0: "0", 1: "1", 12.3456: "12.35", -0.5: "-0.5", 999.96: "1000", 12345.6: "12,346",
		1e-7: "1e-07", 2.5e20: "2.5e+20", 100: "100", 0.012344: "0.01234",
	} {
		if got := FormatFloat(in); got != want {
			t.Errorf("FormatFloat(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestDedent(t *testing.T) {
	got := dedent("\n    # Title\n\n      indented\n    text\n  ")
	if want := "# Title\n\n  indented\ntext\n"; got != want {
		t.Errorf("dedent = %q, want %q", got, want)
	}
}
