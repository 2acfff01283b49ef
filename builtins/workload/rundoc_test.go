package workload

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/runattrs"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime/codec"
)

// TestRunFieldsAnswer: every field of the table is documented, answers on
// a measured run, on the same run read back from the cache and on an exec
// run without samples, and is in JSON under its key; JSON encodes (a NaN
// would make the record drop the run's summary).
func TestRunFieldsAnswer(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range runFields {
		if seen[f.name] || runattrs.Known(f.name) {
			t.Errorf("%s is listed twice", f.name)
		}
		seen[f.name] = true
		if f.unit == "" || f.from == "" || f.doc == "" {
			t.Errorf("%s lacks a unit, source or meaning", f.name)
		}
	}
	back, err := codec.Decode(mustEncode(t, fixedRun()), testModule().Decoders)
	if err != nil {
		t.Fatal(err)
	}
	empty := newRun("exec", loadgen.Spec{Label: "true"}, &loadgen.Result{Hist: newHist(), Errors: map[string]int64{}})
	for _, r := range []*Run{fixedRun(), back.(*Run), empty} {
		js := r.JSON().(map[string]any)
		for _, f := range runFields {
			if v, err := r.Attr(f.name); v == nil || err != nil {
				t.Errorf("%s run: .%s = %v, %v", r.d.Kind, f.name, v, err)
			}
			if _, ok := js[f.jsonKey()]; f.jsonKey() != "" && !ok {
				t.Errorf("%s run: JSON has no %q", r.d.Kind, f.jsonKey())
			}
		}
		if _, err := json.Marshal(js); err != nil {
			t.Errorf("%s run: JSON does not encode: %v", r.d.Kind, err)
		}
		if u := Undocumented(r); len(u) > 0 {
			t.Errorf("%s run: undocumented attributes %v", r.d.Kind, u)
		}
	}
}

// TestRunStoresBackToItsBytes: a run read back from the cache stores again
// to the very bytes it was read from, durations in odd nanoseconds and CPU
// in odd microseconds included (the format keeps them in s, µs and ms), so
// a cached run equals the measured one and keeps its hash.
func TestRunStoresBackToItsBytes(t *testing.T) {
	odd := fixedRun()
	// Durations whose float in s, µs or ms times the unit falls just short
	// of them (found by search): truncating instead of rounding loses 1 ns.
	odd.d.Measured, odd.d.Tick, odd.d.GCPause = 1000000007, 1091473860738, 131918424343
	odd.d.CPU = 524860950*time.Microsecond + 999 // over 500 decided requests
	users := fixedRun()
	users.d.Think, users.d.Result.Think, users.d.Thinks = "exp(1s)", 1234567891011, 499
	users.d.Gaps = loadgen.Moments{N: 499, Mean: 2001.5, M2: 1.25e9}
	for _, r := range []*Run{fixedRun(), odd, users} {
		data := mustEncode(t, r)
		v, err := codec.Decode(data, testModule().Decoders)
		if err != nil {
			t.Fatal(err)
		}
		again := mustEncode(t, v)
		if !bytes.Equal(data, again) {
			t.Errorf("stored %s\nstored again %s", data, again)
		}
		if eq, err := starlark.Equal(r, v); err != nil || !eq {
			t.Errorf("a run read back is not equal to itself: %v", err)
		}
		if v.(*Run).d.Measured != r.d.Measured || v.(*Run).d.Tick != r.d.Tick || v.(*Run).d.GCPause != r.d.GCPause {
			t.Errorf("durations read back %+v, stored %+v", v.(*Run).d.Result, r.d.Result)
		}
	}
}

// TestReferenceListsEveryRunAttribute: the module's reference (benchbook
// help workload, docs/reference/workload.md) carries the table of run
// attributes made from the fields a run answers from and the observers'
// list, in the place its reference.md marks.
func TestReferenceListsEveryRunAttribute(t *testing.T) {
	d := docs()
	if strings.Contains(d, runAttrsMark) || !strings.Contains(reference, runAttrsMark) {
		t.Fatalf("reference.md lost its mark %q, or the table did not replace it", runAttrsMark)
	}
	for _, f := range RunAttrs() {
		if !strings.Contains(d, "| `"+f.Name+"`") {
			t.Errorf("the reference's table lacks the run attribute %s", f.Name)
		}
	}
	for _, a := range runattrs.Observed {
		if !strings.Contains(d, "| `"+a.Name+"`") {
			t.Errorf("the reference's table lacks the observer figure %s", a.Name)
		}
	}
}
