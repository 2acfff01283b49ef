package table

import (
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/codec"
)

func TestTableNotStorable(t *testing.T) {
	fn := starlark.NewBuiltin("f", nil)
	_, err := codec.Encode(New([]string{"f"}, [][]starlark.Value{{fn}}))
	if err == nil || !strings.Contains(err.Error(), "cannot be stored") {
		t.Fatalf("encode of a table holding a function: err = %v, want not storable", err)
	}
}

func TestTableHTMLEscapesAndAligns(t *testing.T) {
	tb := New([]string{"<b>name</b>", "n"}, [][]starlark.Value{
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
	tb := New([]string{"i"}, rows)
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
