package loadgen

import "time"

// TestRecorder is a worker's recorder, for the external tests' benchmarks
// of a wire protocol's client with its recording (bench_http_test.go).
type TestRecorder struct{ rec *recorder }

// NewTestRecorder is a recorder of a run tagged with tags (nil: untagged).
func NewTestRecorder(tags []string) TestRecorder {
	rec := newRecorder(&windows{})
	if tags != nil {
		rec.tags = newTagTable(tags)
	}
	return TestRecorder{rec}
}

// Record records one outcome of tag in the first window, as a worker does.
func (r TestRecorder) Record(lat time.Duration, class, tag string) {
	r.rec.record(lat, 0, class, 0, tag)
}

// LateAfter is the dispatch lag past which an open-loop request is late.
const LateAfter = lateAfter
