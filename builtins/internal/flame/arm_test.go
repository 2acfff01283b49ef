package flame

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/builtins/internal/profile"
	"github.com/benchbook/benchbook/runtime/testsupport/golden"
)

// costlyCheapDiff is six pairs of runs of equal CPU time where A costs 50
// times B per request, as a sequential scan against an index scan: A
// spends its time in heap_getnextslot, B in the index, and btgettuple
// exists in B only, at an eighth of B's CPU.
func costlyCheapDiff(t *testing.T) *profile.Diff {
	t.Helper()
	const q = "postgres;PostmasterMain;exec_simple_query"
	var pairs [][2]string
	for i := range 6 {
		pairs = append(pairs, [2]string{
			fmt.Sprintf("%s;ExecScan;heap_getnextslot %d\n%s;pg_parse_query %d\n%s;ExecutorStart %d\n", q, 395+i%3, q, 1+i%2, q, 2),
			fmt.Sprintf("%s;ExecScan;index_getnext_tid;btgettuple %d\n%s;ExecScan;index_getnext_tid %d\n%s;ExecScan %d\n%s;pg_parse_query %d\n%s;ExecutorStart %d\n",
				q, 48+i%4, q, 100+i%3, q, 108-i%2, q, 70+i%2, q, 72-i%3)})
	}
	return diffOf(t, pairs, 2_004_008, [2]int64{57, 2857}, profile.DiffOptions{})
}

func framesByName(t *testing.T, svg []byte) map[string]svgFrame {
	t.Helper()
	out := map[string]svgFrame{}
	for _, f := range parseSVG(t, svg) {
		out[f.Name] = f
	}
	return out
}

// An arm at its own scale: with A at 50 times B's cost, btgettuple (B
// only) is a sliver of the differential and, in B's graph, a frame as
// wide as its share of B's CPU per request, labelled, red all through
// (new in B) and titled with both arms' figures and its verdict; A's graph
// has no such frame, and its heap_getnextslot (gone in B) is full blue.
func TestArmAtItsOwnScale(t *testing.T) {
	d := costlyCheapDiff(t)
	var bt *profile.DiffNode
	var walk func(*profile.DiffNode)
	walk = func(n *profile.DiffNode) {
		if n.Name == "btgettuple" {
			bt = n
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(d.Tree)
	if bt == nil || bt.Verdict != "WORSENS" {
		t.Fatalf("btgettuple's frame: %+v, want WORSENS", bt)
	}
	const width = 1200
	diff := framesByName(t, Differential(d, Options{Width: width}))
	inB := framesByName(t, Arm(d, SideB, Options{Width: width}))
	inA := framesByName(t, Arm(d, SideA, Options{Width: width}))
	t.Logf("btgettuple %.1f -> %.1f µs/req of %.0f -> %.0f; drawn %.1f px in the differential, %.1f px in B's graph",
		bt.A, bt.B, d.Tree.A, d.Tree.B, diff["btgettuple"].Rect.Width, inB["btgettuple"].Rect.Width)

	f, ok := inB["btgettuple"]
	want := bt.B / d.Tree.B * width
	switch {
	case !ok:
		t.Fatal("B's graph has no btgettuple frame")
	case math.Abs(f.Rect.Width-want) > 0.01 || math.Abs(f.Share-bt.B/d.Tree.B) > 1e-4:
		t.Errorf("btgettuple drawn %.2f px at share %.4f in B's graph, want %.2f px: its share of B's CPU per request", f.Rect.Width, f.Share, want)
	case f.Text != "btgettuple":
		t.Errorf("btgettuple labelled %q in B's graph (%.1f px wide)", f.Text, f.Rect.Width)
	case f.Rect.Fill != ramp(1):
		t.Errorf("btgettuple filled %s in B's graph, want %s: all of it new in B", f.Rect.Fill, ramp(1))
	case !strings.Contains(f.Title, "WORSENS") || !strings.Contains(f.Title, "B "+Num(bt.B)+" µs/req"):
		t.Errorf("btgettuple's title in B's graph: %q", f.Title)
	}
	if w := diff["btgettuple"].Rect.Width; w >= want/10 {
		t.Errorf("btgettuple %.1f px in the differential: the case this graph is for has it a sliver", w)
	}
	if _, ok := inA["btgettuple"]; ok {
		t.Error("A's graph draws btgettuple, which A never ran")
	}
	if h := inA["heap_getnextslot"]; h.Rect.Fill != ramp(-1) || h.Rect.Width < width/2 {
		t.Errorf("heap_getnextslot in A's graph: %.1f px, fill %s; want most of the width, full blue (gone in B)", h.Rect.Width, h.Rect.Fill)
	}
	if g := inB["pg_parse_query"]; g.Rect.Fill != "#d9d9d9" && !strings.Contains(g.Title, "IMPROVES") && !strings.Contains(g.Title, "WORSENS") {
		t.Errorf("pg_parse_query coloured %s without a verdict: %q", g.Rect.Fill, g.Title)
	}
}

func TestArmGolden(t *testing.T) {
	golden.Check(t, "testdata/arm-b.svg", Arm(costlyCheapDiff(t), SideB, Options{Title: "B at its own scale"}))
}
