package profile

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// Bound keeps a profile of thousands of rare deep stacks within its
// bound; the samples, the CPU and the outer frames' totals are what they
// were (counted here from the folded text, not by the package), and what
// was cut is said.
func TestBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	outer := map[string]int64{} // frame at depth 0 or 1 -> samples, counted once per stack line
	var total int64
	for i := range 3000 {
		n := int64(1 + rng.IntN(3))
		if i < 20 {
			n = 500 // the heavy ones stay whole
		}
		frames := []string{"main", fmt.Sprintf("serve%d", i%7)}
		for d := range 4 + rng.IntN(20) {
			frames = append(frames, fmt.Sprintf("f%d_%d", d, rng.IntN(50)))
		}
		fmt.Fprintf(&b, "%s %d\n", strings.Join(frames, ";"), n)
		outer[frames[0]] += n
		outer[frames[1]] += n
		total += n
	}
	p, err := ParseFolded(strings.NewReader(b.String()), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Bound(200) {
		t.Fatal("nothing cut")
	}
	if len(p.Stacks) > 200 {
		t.Errorf("%d stacks past a bound of 200", len(p.Stacks))
	}
	var samples, cpu, cut int64
	for _, s := range p.Stacks {
		samples += s.Samples
		cpu += s.CPUNs
		if s.Frames[len(s.Frames)-1] == CutFrame {
			cut += s.Samples
		}
	}
	if samples != total || cpu != total*1000 || p.Samples != total {
		t.Errorf("samples %d (profile says %d), CPU %d ns; the input had %d samples", samples, p.Samples, cpu, total)
	}
	if cut != p.CutSamples || cut == 0 || len(p.Warnings) != 1 {
		t.Errorf("cut %d samples, CutSamples %d, warnings %q", cut, p.CutSamples, p.Warnings)
	}
	for _, f := range p.Functions() {
		if want, ok := outer[f.Name]; ok {
			if got := f.Total * float64(total); got < float64(want)-1e-6 || got > float64(want)+1e-6 {
				t.Errorf("%s: %.1f samples after the cut, %d before", f.Name, got, want)
			}
		}
	}
	t.Logf("%d stacks, %d of %d samples cut: %s", len(p.Stacks), p.CutSamples, total, p.Warnings[0])
}

// A profile within its bound is left as it is.
func TestBoundWithin(t *testing.T) {
	p, err := ParseFolded(strings.NewReader("a;b 3\na;c 4\n"), 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Bound(2) || len(p.Stacks) != 2 || p.CutSamples != 0 {
		t.Errorf("a profile of 2 stacks bound to 2: %+v", p)
	}
}

// WithRoot puts the target's name above every stack, and the functions'
// shares stay what they were.
func TestWithRoot(t *testing.T) {
	p, err := ParseFolded(strings.NewReader("a;b 3\na;c 1\n"), 1)
	if err != nil {
		t.Fatal(err)
	}
	q := p.WithRoot("postgres")
	if got := string(q.Folded()); got != "postgres;a;b 3\npostgres;a;c 1\n" {
		t.Errorf("folded %q", got)
	}
	if string(p.Folded()) != "a;b 3\na;c 1\n" {
		t.Error("WithRoot changed its receiver")
	}
	fns := functionsByName(q)
	if fns["postgres"].Total != 1 || fns["b"].Self != 0.75 {
		t.Errorf("functions %+v", fns)
	}
}
