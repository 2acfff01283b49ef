package guard

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// LogRules say what a server's log lines mean for a run: lines at ERROR,
// FATAL or PANIC trip (unless an Allow pattern matches them: seed 003's
// "no ERROR except the autovacuum cancel"), and each Count pattern counts
// its lines (seed 000's retry lines per request).
type LogRules struct {
	Allow []*regexp.Regexp
	Count map[string]*regexp.Regexp
}

var (
	levelRE = regexp.MustCompile(`\b(ERROR|FATAL|PANIC)\b`)
	// PostgreSQL: "server process (PID 123) was terminated by signal 9: Killed".
	crashRE = regexp.MustCompile(`terminated by signal \d+`)
)

// logPollEvery is how often a followed log is read during a run.
const logPollEvery = 200 * time.Millisecond

// Lines returns the complete lines a log got since the previous call.
type Lines func() []string

// logTally is what a run's log lines added up to.
type logTally struct {
	mu      sync.Mutex
	levels  map[string]int
	allowed int
	first   string
	crashes []Trip
	counts  map[string]int64
}

func (t *logTally) feed(rules LogRules, source string, at float64, lines []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, l := range lines {
		for name, re := range rules.Count {
			if re.MatchString(l) {
				t.counts[name]++
			}
		}
		if crashRE.MatchString(l) {
			t.crashes = append(t.crashes, Trip{At: at, Source: source, Kind: "crashed_backend", Fatal: true, Evidence: strings.TrimSpace(l)})
			continue
		}
		m := levelRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if allowed(rules.Allow, l) {
			t.allowed++
			continue
		}
		if t.first == "" {
			t.first = strings.TrimSpace(l)
		}
		t.levels[m[1]]++
	}
}

func allowed(allow []*regexp.Regexp, line string) bool {
	for _, re := range allow {
		if re.MatchString(line) {
			return true
		}
	}
	return false
}

// trips are the crashes, plus one trip for the error lines (fatal when one
// was a PANIC).
func (t *logTally) trips(source string, at float64) []Trip {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]Trip(nil), t.crashes...)
	if len(t.levels) == 0 {
		return out
	}
	var parts []string
	for _, lvl := range []string{"PANIC", "FATAL", "ERROR"} {
		if n := t.levels[lvl]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, lvl))
		}
	}
	ev := strings.Join(parts, ", ") + " lines in its log"
	if t.allowed > 0 {
		ev += fmt.Sprintf(" (%d more allowed)", t.allowed)
	}
	ev += "; first: " + t.first
	return append(out, Trip{At: at, Source: source, Kind: "log_errors", Fatal: t.levels["PANIC"] > 0, Evidence: ev})
}

// FollowLog reads next through the window and returns, at stop, the trips
// its lines make under rules.
func FollowLog(ctx context.Context, t0 time.Time, source string, rules LogRules, next Lines) func() []Trip {
	tally, stop := follow(ctx, t0, source, rules, next)
	return func() []Trip {
		stop()
		return tally.trips(source, Since(t0))
	}
}

// CountLog reads next through the window and returns, at stop, each Count
// pattern's lines: NAME (the window's total) and NAME_per_req.
func CountLog(ctx context.Context, rules LogRules, next Lines) func(requests int64) map[string]float64 {
	tally, stop := follow(ctx, time.Now(), "", LogRules{Count: rules.Count}, next)
	return func(requests int64) map[string]float64 {
		stop()
		tally.mu.Lock()
		defer tally.mu.Unlock()
		out := map[string]float64{}
		names := make([]string, 0, len(rules.Count))
		for name := range rules.Count {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			out[name] = float64(tally.counts[name])
			if requests > 0 {
				out[name+"_per_req"] = float64(tally.counts[name]) / float64(requests)
			}
		}
		return out
	}
}

func follow(ctx context.Context, t0 time.Time, source string, rules LogRules, next Lines) (*logTally, func()) {
	tally := &logTally{levels: map[string]int{}, counts: map[string]int64{}}
	stop := Every(ctx, logPollEvery, func() { tally.feed(rules, source, Since(t0), next()) })
	return tally, func() {
		stop()
		tally.feed(rules, source, Since(t0), next())
	}
}
