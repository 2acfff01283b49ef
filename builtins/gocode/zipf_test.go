package gocode

import (
	"context"
	"regexp"
	"testing"

	"go.starlark.net/starlark"
)

// The zipf-keys notebook cannot run end to end before the engine wires
// gocode in; its generator is tested here, through gocode, as the notebook
// and workload.http use it.

func loadZipf(t *testing.T) (*Package, *starlark.Thread) {
	t.Helper()
	th, _ := thread(t, context.Background(), "../../notebooks")
	v, err := starlark.Call(th, members.Members["file"], starlark.Tuple{starlark.String("zipf_keys.go")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v.(*Package), th
}

var requestPath = regexp.MustCompile(`^/search\?q=t(\d{4})&limit=20$`)

func TestZipfRequests(t *testing.T) {
	p, th := loadZipf(t)
	zipf := goFunc(t, p, "zipf").(func() string)
	uniform := goFunc(t, p, "uniform").(func() string)
	first := map[string][]string{}
	for _, g := range []struct {
		name string
		next func() string
	}{{"zipf", zipf}, {"uniform", uniform}} {
		for i := 0; i < 200; i++ {
			s := g.next()
			if m := requestPath.FindStringSubmatch(s); m == nil || m[1] >= "2000" {
				t.Fatalf("%s request %q", g.name, s)
			}
			first[g.name] = append(first[g.name], s)
		}
	}
	// Reset replays the same sequence.
	reset, _ := p.Attr("reset")
	if _, err := starlark.Call(th, reset, starlark.Tuple{starlark.MakeInt(1)}, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if s := zipf(); s != first["zipf"][i] {
			t.Fatalf("after reset, request %d is %q, want %q", i, s, first["zipf"][i])
		}
	}
}

// TestZipfSkew: the Zipf mix concentrates on few tokens, the uniform one
// does not.
func TestZipfSkew(t *testing.T) {
	p, th := loadZipf(t)
	describe, _ := p.Attr("describe")
	mix := map[string]starlark.HasAttrs{}
	for _, kind := range []string{"zipf", "uniform"} {
		v, err := starlark.Call(th, describe, starlark.Tuple{starlark.String(kind), starlark.MakeInt(20000), starlark.MakeInt(7)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		mix[kind] = v.(starlark.HasAttrs)
	}
	num := func(kind, attr string) float64 {
		v, err := mix[kind].Attr(attr)
		if err != nil || v == nil {
			t.Fatalf("%s.%s: %v", kind, attr, err)
		}
		f, _ := starlark.AsFloat(v)
		return f
	}
	if z, u := num("zipf", "top10"), num("uniform", "top10"); z < 5*u || z < 0.2 {
		t.Errorf("top-10 share: zipf %.3f, uniform %.3f", z, u)
	}
	if z, u := num("zipf", "distinct"), num("uniform", "distinct"); z >= u {
		t.Errorf("distinct tokens: zipf %v, uniform %v", z, u)
	}
	if _, err := starlark.Call(th, describe, starlark.Tuple{starlark.String("pareto"), starlark.MakeInt(1), starlark.MakeInt(1)}, nil); err == nil {
		t.Error("describe accepted an unknown kind")
	}
}
