package workload

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime/codec"
)

// fixedRun is a run of fixed figures, every stored field set, as newRun
// makes it from what loadgen measured.
func fixedRun() *Run {
	hist, ok := newHist(), newHist()
	for i := int64(1); i <= 500; i++ {
		_ = hist.RecordValue(100 + 7*i)
		if i%10 != 0 {
			_ = ok.RecordValue(100 + 7*i)
		}
	}
	res := &loadgen.Result{Hist: hist, OK: ok, Service: ok, Errors: map[string]int64{"status 500": 50},
		Windows:  []loadgen.Window{{Start: 0, Count: 220, RPS: 440, P50: 1.9, P99: 3.5, Errors: map[string]int64{"status 500": 25}}, {Start: 0.5, Count: 230, RPS: 460, P50: 1.8, P99: 3.4, Errors: map[string]int64{"status 500": 25}}},
		Intended: 500, Count: 450, Measured: time.Second, CPU: 20 * time.Millisecond, GCPause: time.Millisecond,
		Observed: map[string]float64{"foreign_cpu": 0.1, "load1": 0.5, "server_cpu_us_per_req": 42},
		Warnings: []string{"a warning"},
		Trips:    []guard.Trip{{At: 0.2, Source: "process x", Kind: "log_errors", Evidence: "ERROR y"}}}
	return newRun("http", loadgen.Spec{Label: "GET http://127.0.0.1:1/", Clients: 2, Window: 500 * time.Millisecond}, res)
}

// A run measured without profile = True is stored as the very bytes it was
// stored as before profiles existed (hashed at bc332ef, before this
// package knew of them), so a cell that read such a run keeps its cache
// key: a value's key part is the hash of its encoding.
//
// gen_cpu_share (issue 49) joined what a new run stores; a run stored
// before it reads back with NaN and stores back to the same bytes, which is
// what a key needs: this run is such a one.
func TestRunEncodingUnchangedByProfiles(t *testing.T) {
	old := fixedRun()
	old.d.GenShare = math.NaN()
	data, err := codec.Encode(old)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	const golden = "12bb487e53bcb57366ff6853971f4116fe5118ec2706768cce0f6d62a4ae2951"
	if got := hex.EncodeToString(sum[:]); got != golden {
		t.Errorf("a run without a profile encodes to %s, it encoded to %s before profiles", got, golden)
	}
}
