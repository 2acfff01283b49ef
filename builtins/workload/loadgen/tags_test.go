package loadgen_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/h1wire"
)

// pathCounter is the oracle of the tag tests: a net/http server that
// counts every request it parses by method and path, and answers 503 for
// paths under /fail.
type pathCounter struct {
	mu     sync.Mutex
	counts map[string]int64
}

func (p *pathCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.counts[r.Method+" "+r.URL.Path]++
	p.mu.Unlock()
	if strings.HasPrefix(r.URL.Path, "/fail") {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
}

func (p *pathCounter) reset() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.counts
	p.counts = map[string]int64{}
	return c
}

// mixRequests is the mix the tag tests send: three kinds, two sharing the
// tag "read", one failing.
var mixRequests = []h1wire.HTTPRequest{
	{Tag: "read", URL: "/items/1", Weight: 3},
	{Tag: "read", URL: "/items/2", Weight: 1},
	{Tag: "write", URL: "/items", Method: "POST", Body: []byte(`{"n":1}`), Weight: 2},
	{Tag: "broken", URL: "/fail", Weight: 1},
}

// mixServerKeys maps the server's method+path to the mix's tags.
var mixServerKeys = map[string]string{"GET /items/1": "read", "GET /items/2": "read", "POST /items": "write", "GET /fail": "broken"}

// TestTagsCountEveryRequestOnce: every request of a mixed run lands in
// exactly one tag, the tag the server saw it as: the target's own count by
// path is the oracle, for the closed and the open loop, over plain HTTP
// (event loops) and https (a goroutine per client, open-loop workers). The
// tags' figures add up to the run's, each tag's counts to its intended,
// and the shares follow the weights (chi-square at 1 %).
func TestTagsCountEveryRequestOnce(t *testing.T) {
	oracle := &pathCounter{counts: map[string]int64{}}
	plain := httptest.NewServer(oracle)
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(oracle)
	defer tlsSrv.Close()
	for _, tc := range []struct {
		name string
		url  string
		spec loadgen.Spec
	}{
		{"closed loop", plain.URL, loadgen.Spec{Clients: 6}},
		{"open loop", plain.URL, loadgen.Spec{Rate: 1500, MaxInflight: 32}},
		{"closed https", tlsSrv.URL, loadgen.Spec{Clients: 3}},
		{"open https", tlsSrv.URL, loadgen.Spec{Rate: 800, MaxInflight: 16}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tgt, err := h1wire.NewHTTPTarget(h1wire.HTTPSpec{URL: tc.url, Requests: mixRequests, Seed: 7, Insecure: true})
			if err != nil {
				t.Fatal(err)
			}
			spec := tc.spec
			spec.Duration, spec.Window, spec.Timeout = 700*time.Millisecond, 200*time.Millisecond, 5*time.Second
			oracle.reset()
			res := loadgen.Run(context.Background(), spec, tgt)
			served := oracle.reset()
			checkTagAccounts(t, res)
			byTag := map[string]int64{}
			for key, n := range served {
				tag, ok := mixServerKeys[key]
				if !ok {
					t.Fatalf("the server saw %q, which the mix never sends", key)
				}
				byTag[tag] += n
			}
			for tag, n := range byTag {
				got := res.Tags[tag]
				if got == nil || got.Intended != n {
					t.Errorf("tag %s: the server saw %d requests, the run counts %v", tag, n, got)
				}
			}
			if n := res.Tags["broken"].Errors["status 503"]; n != byTag["broken"] || n == 0 {
				t.Errorf("broken: %d failures counted by class, the server failed %d", n, byTag["broken"])
			}
			if res.Tags["read"].Count+res.Tags["write"].Count != res.Count {
				t.Errorf("the successes of read and write (%d + %d) are not the run's %d", res.Tags["read"].Count, res.Tags["write"].Count, res.Count)
			}
			mix, _ := loadgen.NewMix([]float64{3, 1, 2, 1}, 7)
			sh := mix.Shares()
			chiSquare(t, map[string]int64{"read": byTag["read"], "write": byTag["write"], "broken": byTag["broken"]},
				map[string]float64{"read": sh[0] + sh[1], "write": sh[2], "broken": sh[3]})
		})
	}
}

// checkTagAccounts: each tag's counts add up to its intended, its
// histograms hold its decided requests, and the tags sum to the run.
func checkTagAccounts(t *testing.T, res *loadgen.Result) {
	t.Helper()
	if res.Tags == nil {
		return
	}
	var sum loadgen.Result
	sum.Errors = map[string]int64{}
	var hist, windows int64
	for tag, r := range res.Tags {
		decided := r.Count + loadgen.SumErrors(r.Errors) + r.Dropped
		if got := decided + r.Undecided; got != r.Intended {
			t.Errorf("tag %s: %d accounted for, %d intended", tag, got, r.Intended)
		}
		if r.Hist.TotalCount() != decided || r.OK.TotalCount() != r.Count {
			t.Errorf("tag %s: hist %d (want %d decided), ok %d (want %d)", tag, r.Hist.TotalCount(), decided, r.OK.TotalCount(), r.Count)
		}
		for _, w := range r.Windows {
			windows += w.Count
		}
		sum.Intended += r.Intended
		sum.Count += r.Count
		sum.Dropped += r.Dropped
		sum.Undecided += r.Undecided
		for k, v := range r.Errors {
			sum.Errors[k] += v
		}
		hist += r.Hist.TotalCount()
	}
	if sum.Intended != res.Intended || sum.Count != res.Count || sum.Dropped != res.Dropped || sum.Undecided != res.Undecided ||
		loadgen.SumErrors(sum.Errors) != loadgen.SumErrors(res.Errors) || hist != res.Hist.TotalCount() {
		t.Errorf("the tags sum to intended %d, count %d, errors %v, dropped %d, undecided %d, hist %d; the run has %d, %d, %v, %d, %d, %d",
			sum.Intended, sum.Count, sum.Errors, sum.Dropped, sum.Undecided, hist, res.Intended, res.Count, res.Errors, res.Dropped, res.Undecided, res.Hist.TotalCount())
	}
	var runWindows int64
	for _, w := range res.Windows {
		runWindows += w.Count
	}
	if windows != runWindows {
		t.Errorf("the tags' windows hold %d successes, the run's %d", windows, runWindows)
	}
	for _, w := range res.Warnings {
		if strings.HasPrefix(w, "accounting") {
			t.Error(w)
		}
	}
}

// chiSquare fails t when the counts do not follow the shares at the 1 %
// level (Pearson's test, k-1 degrees of freedom).
func chiSquare(t *testing.T, counts map[string]int64, shares map[string]float64) {
	t.Helper()
	stat, n := chi2(counts, shares)
	crit := chi2Crit99[len(shares)-1]
	t.Logf("%d requests %v, chi-square %.2f (1 %% critical %.2f)", n, counts, stat, crit)
	if stat > crit {
		t.Errorf("the counts %v do not follow the shares %v: chi-square %.2f > %.2f", counts, shares, stat, crit)
	}
}

func chi2(counts map[string]int64, shares map[string]float64) (float64, int64) {
	var n int64
	for _, c := range counts {
		n += c
	}
	var stat float64
	for tag, s := range shares {
		exp := s * float64(n)
		d := float64(counts[tag]) - exp
		stat += d * d / exp
	}
	return stat, n
}

// chi2Crit99 is the chi-square distribution's 99th percentile by degrees
// of freedom.
var chi2Crit99 = map[int]float64{1: 6.635, 2: 9.210, 3: 11.345, 4: 13.277}

// TestMixDrawsItsWeights: over 300 seeds of 4,000 draws each, the share
// of draws that a chi-square test at 1 % rejects is what 1 % of chance
// gives (at most 3 % here: 9 or more of 300 has probability 0.4 % for a
// fair draw), for the open loop's one stream and a closed loop's many;
// and two clients' streams are not the same sequence.
func TestMixDrawsItsWeights(t *testing.T) {
	weights := []float64{5, 3, 1.5, 0.5}
	names := []string{"a", "b", "c", "d"}
	const seeds, draws = 300, 4000
	for _, streams := range []int{1, 8} {
		rejected := 0
		for seed := range seeds {
			m, err := loadgen.NewMix(weights, uint64(seed))
			if err != nil {
				t.Fatal(err)
			}
			counts := map[string]int64{}
			for i := range draws {
				stream, seq := int64(0), int64(i)
				if streams > 1 {
					stream, seq = int64(1+i%streams), int64(i/streams)
				}
				counts[names[m.Pick(stream, seq)]]++
			}
			shares := map[string]float64{}
			for i, s := range m.Shares() {
				shares[names[i]] = s
			}
			if stat, _ := chi2(counts, shares); stat > chi2Crit99[3] {
				rejected++
			}
		}
		t.Logf("%d streams: %d of %d seeds rejected at 1 %%", streams, rejected, seeds)
		if rejected > 9 {
			t.Errorf("%d streams: %d of %d seeds rejected at 1 %%: the draw does not follow its weights", streams, rejected, seeds)
		}
	}
	m, _ := loadgen.NewMix(weights, 1)
	same := 0
	for seq := range int64(1000) {
		if m.Pick(1, seq) == m.Pick(2, seq) {
			same++
		}
	}
	// Independent draws agree with probability sum(share^2) = 0.35.
	if same > 420 {
		t.Errorf("clients 1 and 2 drew the same kind %d times in 1000: their streams are not independent", same)
	}
}

// TestNewMixRefusesBadWeights names the request whose weight is wrong.
func TestNewMixRefusesBadWeights(t *testing.T) {
	for _, w := range [][]float64{{1, 0}, {1, -2}, {math.Inf(1)}, {math.NaN()}, nil} {
		if _, err := loadgen.NewMix(w, 0); err == nil {
			t.Errorf("weights %v accepted", w)
		}
	}
	if _, err := loadgen.NewMix([]float64{1, -2}, 0); err == nil || !strings.Contains(err.Error(), "requests[1]") {
		t.Errorf("error %v does not name requests[1]", err)
	}
}

// TestTaggedGeneratorAndInterrupt: a generator that names each request's
// tag, in the open loop, Ctrl-C mid-run: every request due before the
// stop is in its tag (the generator is asked for the tag of those never
// sent), and the tags add up to the run.
func TestTaggedGeneratorAndInterrupt(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(150 * time.Millisecond):
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	gen := func(seq int64) (h1wire.HTTPRequest, error) {
		tag := []string{"a", "b", "c"}[seq%3]
		return h1wire.HTTPRequest{URL: "/" + tag, Tag: tag}, nil
	}
	for _, loop := range []loadgen.Spec{{Rate: 200, MaxInflight: 8}, {Clients: 4}} {
		tgt, err := h1wire.NewHTTPTarget(h1wire.HTTPSpec{URL: slow.URL, Tagged: gen})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(600*time.Millisecond, cancel)
		loop.Duration, loop.Warmup, loop.Window, loop.Timeout = 5*time.Second, 100*time.Millisecond, time.Second, time.Second
		res := loadgen.Run(ctx, loop, tgt)
		cancel()
		if !res.Interrupted || res.Undecided == 0 {
			t.Errorf("%+v: interrupted %v, undecided %d", loop, res.Interrupted, res.Undecided)
		}
		checkTagAccounts(t, res)
		tags := make([]string, 0, len(res.Tags))
		for tag := range res.Tags {
			tags = append(tags, tag)
		}
		sort.Strings(tags)
		if fmt.Sprint(tags) != "[a b c]" {
			t.Errorf("tags %v, want [a b c]", tags)
		}
		if loop.Rate > 0 && res.Tags["a"].Dropped+res.Tags["a"].Undecided == 0 {
			t.Errorf("a: nothing undecided or dropped in an overloaded open loop cut short: %+v", res.Tags["a"])
		}
	}
}

// BenchmarkPickMix is the cost of one draw from a mix of four.
func BenchmarkPickMix(b *testing.B) {
	m, _ := loadgen.NewMix([]float64{5, 3, 1.5, 0.5}, 1)
	var n int
	for i := range b.N {
		n += m.Pick(3, int64(i))
	}
	_ = n
}
