package stdlib_test

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/hostinfo"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// workers is a target whose capacity is known by construction: c workers
// (a semaphore) that each sleep a fixed service time per request, timing
// the service they give, so the oracle uses what the server did, not what
// it was told.
type workers struct {
	sem     chan struct{}
	service time.Duration
	mu      sync.Mutex
	busy    time.Duration // service given, summed
	served  int
	given   []time.Duration // each service given (the tests serve some thousands)
}

func newWorkers(c int, service time.Duration) *workers {
	return &workers{sem: make(chan struct{}, c), service: service}
}

func (w *workers) ServeHTTP(rw http.ResponseWriter, _ *http.Request) {
	w.sem <- struct{}{}
	t0 := time.Now()
	time.Sleep(w.service)
	d := time.Since(t0)
	<-w.sem
	w.mu.Lock()
	w.busy += d
	w.served++
	w.given = append(w.given, d)
	w.mu.Unlock()
	rw.Write([]byte("ok"))
}

// meanService is the mean service time the workers gave.
func (w *workers) meanService() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.served == 0 {
		return w.service
	}
	return w.busy / time.Duration(w.served)
}

// serviceSD is the standard deviation of the services the workers gave,
// in ms.
func (w *workers) serviceSD() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.given) < 2 {
		return 0
	}
	var sum, sq float64
	for _, d := range w.given {
		sum += ms(d)
	}
	mean := sum / float64(len(w.given))
	for _, d := range w.given {
		sq += (ms(d) - mean) * (ms(d) - mean)
	}
	return math.Sqrt(sq / float64(len(w.given)-1))
}

// searchWorkers runs capacity against w with the search given, up to
// three times while the box is busy, and returns the capacity's interval
// and how busy the box was.
//
// truth gives the capacities the service the server gave allows, lo to hi
// (one value when the model gives one): the search's interval must meet
// them.
func searchWorkers(t *testing.T, w *workers, search string, truth func() (lo, hi float64)) {
	t.Helper()
	srv := httptest.NewServer(w)
	defer srv.Close()
	for attempt := 1; ; attempt++ {
		o := options(t)
		o.Globals["url"] = starlark.String(srv.URL)
		g := startest.MustExec(t, o, "load(\"@std/capacity.star\", \"capacity\")\n"+strings.ReplaceAll(search, "NAME", fmt.Sprint("try", attempt)))
		c := g["cap"].(starlark.HasAttrs)
		iv := attr(t, c, "interval").(starlark.Tuple)
		lo, _ := starlark.AsFloat(iv[0])
		hi, _ := starlark.AsFloat(iv[1])
		tlo, thi := truth()
		t.Logf("attempt %d: %s; truth %g to %g (service mean %s, sd %.2f ms)", attempt, attr(t, c, "sentence"), tlo, thi, w.meanService(), w.serviceSD())
		for s := range starlark.Elements(attr(t, c, "warnings").(*starlark.List)) {
			t.Logf("warning: %s", s)
		}
		ok := attr(t, c, "status") == starlark.String("ok") && lo <= thi && tlo <= hi
		load, _ := hostinfo.LoadAvg()
		if ok || attempt == 3 || load[0] < 2 {
			if !ok {
				t.Errorf("capacity %s, interval [%g, %g]: the truth, %g to %g, is not in it", attr(t, c, "status"), lo, hi, tlo, thi)
			}
			checkStored(t, g["cap"])
			return
		}
		t.Logf("load %.1f: again", load[0])
	}
}

// checkStored: the capacity stores, reads back equal, with its runs.
func checkStored(t *testing.T, v starlark.Value) {
	t.Helper()
	data, err := codec.Encode(v)
	if err != nil {
		t.Fatalf("capacity not storable: %v", err)
	}
	back, err := codec.Decode(data, runtime.MustModuleSet(nil, modules()...).Decoders())
	if err != nil {
		t.Fatalf("capacity does not decode: %v", err)
	}
	if eq, err := starlark.Equal(v, back); err != nil || !eq {
		t.Errorf("a capacity read back is not the one stored (%v)", err)
	}
	pts := attr(t, back.(starlark.HasAttrs), "points").(*starlark.List)
	if run := attr(t, pts.Index(0).(starlark.HasAttrs), "run"); run.Type() != "run" {
		t.Errorf("a point read back holds a %s, not its run", run.Type())
	}
}

// TestCapacityOfWorkersAtZeroThink: c = 2 workers of S = 10 ms against
// closed-loop users with zero think time. N users keep N requests in the
// system, so each waits N·S/c (the service they queue behind and their
// own): p99 <= 50 ms holds while N·S/c <= 50 ms, 9 users with a service
// that is never shorter than asked (10 would need exactly 10 ms). For the
// service the server gave (mean m, sd s), the users queue in turn, so a
// request waits through N/c services on average but ceil(N/c) at worst
// (9 users on 2 workers wait 4 and 5 services by turns): the p99 is the
// worst wait, and the truth lies between the largest N whose
// ceil(N/c)·m + 2.33·sqrt(ceil(N/c))·s is <= 50 ms and the largest whose
// ceil(N/c)·m is. The interval must meet that range (at a mean of 10.4 ms
// every search found 8: the mean wait's model, N·m/c, said 9).
func TestCapacityOfWorkersAtZeroThink(t *testing.T) {
	timing.Only(t, "a capacity search against a real server")
	w := newWorkers(2, 10*time.Millisecond)
	searchWorkers(t, w, `
cap = capacity(lambda n: workload.http(url, users = n, duration = "0.3s", warmup = "0.1s"),
               {"p99": 50}, 4, 16, confidence = 0.9, name = "NAME")
`, func() (float64, float64) {
		m, sd, lo, hi := ms(w.meanService()), w.serviceSD(), 0.0, 0.0
		for n := 1.0; n < 100; n++ {
			k := math.Ceil(n / 2) // the services a request waits through, its own included, at worst
			if k*m+2.33*math.Sqrt(k)*sd <= 50 {
				lo = n
			}
			if k*m <= 50 {
				hi = n
			}
		}
		return lo, hi
	})
}

// TestCapacityOfWorkersWithThinkTime: the same workers (S = 4 ms) against
// users who think Z = 40 ms between requests. Past saturation the workers
// serve c/S requests a second whatever N, so by the interactive
// response-time law N = X (R + Z) the mean response time is R = N·S/c - Z.
// The limit on the mean sits halfway between two user counts (for the
// service the server gave in a first run), so the truth is that the
// capacity is the lower one.
func TestCapacityOfWorkersWithThinkTime(t *testing.T) {
	timing.Only(t, "a capacity search against a real server")
	const c, think = 2, 40.0
	w := newWorkers(c, 4*time.Millisecond)
	calibrate(t, w)
	s := ms(w.meanService())
	n := 40.0                    // the capacity by construction
	limit := (n+0.5)*s/c - think // R at N + 1/2
	searchWorkers(t, w, fmt.Sprintf(`
cap = capacity(lambda n: workload.http(url, users = n, think = "40ms", duration = "0.4s", warmup = "0.2s"),
               {"mean": %.3f}, 24, 64, confidence = 0.9, name = "NAME")
`, limit), func() (float64, float64) {
		// The law's crossing for the service given, within 2 %: the
		// service drifts between the calibration and the search (4.58 ->
		// 4.63 ms), and a worker's wake-up after each service adds to it
		// (a crossing at 37.03 users was found at 35 to 36).
		n := (limit + think) * c / ms(w.meanService())
		return math.Floor(n / 1.02), math.Floor(n * 1.02)
	})
}

// calibrate serves a few requests so that meanService is the server's own.
func calibrate(t *testing.T, w *workers) {
	srv := httptest.NewServer(w)
	defer srv.Close()
	for range 20 {
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
