package loadgen

import (
	"testing"
	"time"
)

// BenchmarkRecord is the cost of recording one latency in a worker.
func BenchmarkRecord(b *testing.B) {
	rec := newRecorder(&windows{})
	b.ReportAllocs()
	for i := range b.N {
		rec.record(time.Duration(i%5000)*time.Microsecond, time.Millisecond, "", i>>20, "")
	}
}

// BenchmarkProgressLine is the cost of one progress update.
func BenchmarkProgressLine(b *testing.B) {
	r := &engine{spec: Spec{Duration: 10 * time.Second, Label: "GET http://x/"}, shared: &windows{}, start: time.Now()}
	r.measureAt = r.start
	for range 16 {
		r.recs = append(r.recs, newRecorder(r.shared))
	}
	r.recs[0].record(time.Millisecond, time.Millisecond, "", 0, "")
	r.recs[0].flush()
	b.ReportAllocs()
	for range b.N {
		_, errs := r.counts()
		_ = progressLine(r, time.Now(), 1234, errs)
	}
}

// BenchmarkRecordTagged is the cost of recording one latency in a worker of
// a tagged run: the run's recorder and its tag's (issue 50: tagging must
// cost the loop next to nothing).
func BenchmarkRecordTagged(b *testing.B) {
	rec := newRecorder(&windows{})
	rec.tags = newTagTable([]string{"read", "write", "search", "like"})
	tags := []string{"read", "write", "search", "like"}
	b.ReportAllocs()
	for i := range b.N {
		rec.record(time.Duration(i%5000)*time.Microsecond, time.Millisecond, "", i>>20, tags[i&3])
	}
}
