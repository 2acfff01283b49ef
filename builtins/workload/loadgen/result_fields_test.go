package loadgen

import (
	"encoding/json"
	"reflect"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchbook/benchbook/builtins/internal/guard"
)

// everyField is a Result whose every exported field is set (but Observed
// and LateObservers, which a fleet leaves to the coordinator's observers): a field added
// later is set here by its type, or the test says it cannot.
func everyField(t *testing.T) *Result {
	t.Helper()
	hist := func() *hdrhistogram.Histogram { h := NewHist(); h.RecordValue(1000); return h }
	r := &Result{}
	v := reflect.ValueOf(r).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if name == "Observed" || name == "LateObservers" {
			continue
		}
		switch x := f.Addr().Interface().(type) {
		case **hdrhistogram.Histogram:
			*x = hist()
		case *[]*hdrhistogram.Histogram:
			*x = []*hdrhistogram.Histogram{hist()}
		case *map[string]int64:
			*x = map[string]int64{"timeout": 1}
		case *[]Window:
			*x = []Window{{Count: 1, Errors: map[string]int64{"timeout": 1}}}
		case *[]string:
			*x = []string{"a warning"}
		case *[]guard.Trip:
			*x = []guard.Trip{{Kind: "exited", Fatal: true}}
		case *bool:
			*x = true
		case *map[string]*Result:
			*x = map[string]*Result{"read": {Hist: hist(), OK: hist(), Count: 1, Intended: 1, Errors: map[string]int64{}}}
		case *Moments:
			*x = Moments{N: 2, Mean: 1, M2: 1}
		default:
			if f.CanInt() {
				f.SetInt(1)
				continue
			}
			t.Fatalf("Result.%s (%s): set it here, then carry it in Merge and on the wire", name, f.Type())
		}
	}
	return r
}

// missing lists the fields of r (but the observers') left at their zero value.
func missing(r *Result) []string {
	var out []string
	v := reflect.ValueOf(r).Elem()
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if name != "Observed" && name != "LateObservers" && v.Field(i).IsZero() {
			out = append(out, name)
		}
	}
	return out
}

// TestMergeAndWireCarryEveryField: every figure of an agent's share
// reaches the merged run and survives the wire, so a field added to
// Result without its line in Merge or its JSON fails here, not as a
// silently undercounted fleet figure (bump fleet.Version with the wire).
func TestMergeAndWireCarryEveryField(t *testing.T) {
	src := everyField(t)
	merged := NewResult()
	merged.Merge(src, 0)
	if m := missing(merged); len(m) > 0 {
		t.Errorf("Merge drops %v", m)
	}
	data, err := json.Marshal(src)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if m := missing(&back); len(m) > 0 {
		t.Errorf("the wire drops %v", m)
	}
	for _, r := range []*Result{merged, &back} {
		if tag := r.Tags["read"]; tag == nil || tag.Count != 1 || tag.Hist == nil || tag.Hist.TotalCount() != 1 {
			t.Errorf("a tag's figures lost: %+v", tag)
		}
	}
}
