// Command results writes bench/RESULTS.md's tables from bench/workload's raw
// outputs. It turns the raw outputs that bench/workload/compare.sh keeps
// into those Markdown tables, so that every figure there can be re-derived
// from files in the repository:
//
//	go run ./bench/workload/results bench/workload/raw/<dir>                         print the tables
//	go run ./bench/workload/results -write bench/RESULTS.md bench/workload/raw/<dir>  replace them in the file
//
// It computes nothing that the raw files do not hold: per round, each tool's
// rate, client CPU per request and latency as the tool printed them, the
// 1-minute load average before and after each run, and the ratio ours / the
// peer's within the round; then the median of the per-round ratios. Peers
// report different latency statistics, so each table names the statistic
// on both sides (a mean beside a mean, a percentile beside a percentile).
package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/benchbook/benchbook/bench/internal/mdsection"
	"github.com/benchbook/benchbook/runtime/stats"
)

func main() {
	mdsection.Main("bench/workload/results", func(dir string) (string, error) {
		set, err := readRaw(dir)
		if err != nil {
			return "", err
		}
		return render(set), nil
	})
}

// measurement is one run of one tool, as its raw file holds it.
type measurement struct {
	file                 string
	section, tool        string
	round, slot          int
	load1Before, load1At float64 // 1-minute load average before and after
	rps, cpuUsPerReq     float64 // NaN when the output lacks them
	p50, p99, mean       float64 // ms; NaN when the tool does not report it
	servicP50, lag       float64 // ms: benchbook's service time, pgbench -R's schedule lag
	sentRPS              float64 // open loops: what the tool sent on time, per second (see parsers); NaN when unknown
	failed               string  // why the run's figures are missing
	body                 string
}

// rawSet is one compare.sh run: its meta.txt and its measurements.
type rawSet struct {
	dir  string
	meta map[string]string
	runs []measurement
}

func readRaw(dir string) (*rawSet, error) {
	set := &rawSet{dir: dir}
	meta, _, err := readKV(filepath.Join(dir, "meta.txt"))
	if err != nil {
		return nil, err
	}
	set.meta = meta
	files, err := filepath.Glob(filepath.Join(dir, "*-r*-*.txt"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%s: no run files (*-rN-S-TOOL.txt)", dir)
	}
	slices.Sort(files)
	for _, f := range files {
		m, err := readMeasurement(f)
		if err != nil {
			return nil, err
		}
		set.runs = append(set.runs, m)
	}
	return set, nil
}

// readKV reads key=value lines; a run file has a header, "---", the tool's
// output, "---", a footer. It returns the keys of header and footer and
// the output between.
func readKV(path string) (map[string]string, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	kv := map[string]string{}
	parts := strings.Split(string(data), "\n---\n")
	body := ""
	if len(parts) == 3 {
		body = parts[1]
	}
	for _, i := range []int{0, len(parts) - 1} {
		sc := bufio.NewScanner(strings.NewReader(parts[i]))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok && !strings.Contains(k, " ") {
				kv[k] = v
			}
		}
	}
	return kv, body, nil
}

func readMeasurement(path string) (measurement, error) {
	kv, body, err := readKV(path)
	if err != nil {
		return measurement{}, err
	}
	m := measurement{file: filepath.Base(path), section: kv["section"], tool: kv["tool"], body: body}
	m.round, _ = strconv.Atoi(kv["round"])
	m.slot, _ = strconv.Atoi(kv["slot"])
	m.load1Before = parseFloat(kv["load1_before"])
	m.load1At = parseFloat(kv["load1_after"])
	m.rps, m.cpuUsPerReq, m.p50, m.p99, m.mean, m.servicP50, m.lag, m.sentRPS = nan, nan, nan, nan, nan, nan, nan, nan
	if m.section == "" || m.tool == "" || m.round == 0 {
		return m, fmt.Errorf("%s: header lacks section, tool or round", path)
	}
	parsers[m.tool](&m)
	if e := kvFirst(body, "exit"); e != "" {
		m.failed = "exit status " + e
	}
	return m, nil
}

var nan = math.NaN()

func parseFloat(s string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(strings.ReplaceAll(s, ",", "")), 64)
	if err != nil {
		return nan
	}
	return f
}

// kvFirst finds key=value in free text.
func kvFirst(text, key string) string {
	m := regexp.MustCompile(`(?:^|\s)` + regexp.QuoteMeta(key) + `=(\S+)`).FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	return m[1]
}

func find(text, pattern string) string {
	m := regexp.MustCompile(pattern).FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	return m[1]
}

// duration parses "1.23ms", "850.5us", "81.2µs", "2.1s", "950ns" to ms.
func durationMs(s string) float64 {
	s = strings.TrimSpace(s)
	for _, u := range []struct {
		suffix string
		ms     float64
	}{{"ms", 1}, {"us", 1e-3}, {"µs", 1e-3}, {"ns", 1e-6}, {"m", 60e3}, {"s", 1e3}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			return parseFloat(v) * u.ms
		}
	}
	return nan
}

// cpuPerReq is the cpu wrapper's user+sys seconds over n requests, in µs.
func cpuPerReq(body string, n float64) float64 {
	return parseFloat(kvFirst(body, "cpu_s")) * 1e6 / n
}

// parsers read each tool's output. sentRPS is what decides whether an open
// loop held its rate, so it must count requests sent on time, not responses:
// benchbook's rps counts every response to a request due in the window,
// however late it was sent, so it equals the rate whenever the target
// answers, and a check on it could not fail. Each peer gives what it has:
// wrk2 its requests over its run (Requests/sec: it sends late requests too
// but reports no count of them, and what it sent late at the end is not in
// its count), vegeta its attack's send rate, pgbench -R its transactions
// over its run (it counts late ones only under --latency-limit).
var parsers = map[string]func(*measurement){
	"benchbook": func(m *measurement) {
		m.rps = parseFloat(kvFirst(m.body, "rps"))
		m.sentRPS = benchbookSentRate(m.body)
		m.cpuUsPerReq = parseFloat(kvFirst(m.body, "cpu_us_per_req"))
		if kvFirst(m.body, "cpu_s") != "" { // run under the cpu wrapper: the whole process, as the peer
			m.cpuUsPerReq = cpuPerReq(m.body, parseFloat(kvFirst(m.body, "count")))
		}
		m.p50 = parseFloat(kvFirst(m.body, "p50_ms"))
		m.p99 = parseFloat(kvFirst(m.body, "p99_ms"))
		m.mean = parseFloat(kvFirst(m.body, "mean_ms"))
		m.servicP50 = parseFloat(kvFirst(m.body, "service_p50_ms"))
	},
	"wrk": func(m *measurement) {
		m.rps = parseFloat(find(m.body, `Requests/sec:\s+([\d.]+)`))
		m.cpuUsPerReq = cpuPerReq(m.body, parseFloat(find(m.body, `(\d+) requests in`)))
		m.mean = durationMs(find(m.body, `Latency\s+(\S+)`))
		m.p50 = durationMs(find(m.body, `\s50%\s+(\S+)`))
		m.p99 = durationMs(find(m.body, `\s99%\s+(\S+)`))
	},
	"vegeta": func(m *measurement) {
		req := strings.Split(find(m.body, `Requests\s+\[total, rate, throughput\]\s+(.+)`), ",")
		lat := strings.Split(find(m.body, `Latencies\s+\[min, mean, 50, 90, 95, 99, max\]\s+(.+)`), ",")
		if len(req) == 3 && len(lat) == 7 {
			m.rps = parseFloat(req[2]) // throughput: successful responses per second
			m.sentRPS = parseFloat(req[1])
			m.cpuUsPerReq = cpuPerReq(m.body, parseFloat(req[0]))
			m.mean, m.p50, m.p99 = durationMs(lat[1]), durationMs(lat[2]), durationMs(lat[5])
		}
	},
	// wrk2's latencies are from each request's intended start (its
	// corrected histogram: "Recorded Latency").
	"wrk2": func(m *measurement) {
		m.rps = parseFloat(find(m.body, `Requests/sec:\s+([\d.]+)`))
		m.sentRPS = m.rps
		m.cpuUsPerReq = cpuPerReq(m.body, parseFloat(find(m.body, `(\d+) requests in`)))
		m.mean = durationMs(find(m.body, `Latency\s+(\S+)`))
		m.p50 = durationMs(find(m.body, `\s50\.000%\s+(\S+)`))
		m.p99 = durationMs(find(m.body, `\s99\.000%\s+(\S+)`))
	},
	"pgbench":   pgbench,
	"pgbench-R": pgbench,
}

func init() { parsers["untagged"] = parsers["benchbook"] } // benchbook before tags: the same output

func pgbench(m *measurement) {
	m.rps = parseFloat(find(m.body, `tps = ([\d.]+)`))
	m.sentRPS = m.rps
	m.cpuUsPerReq = cpuPerReq(m.body, parseFloat(find(m.body, `actually processed: (\d+)`)))
	m.mean = parseFloat(find(m.body, `latency average = ([\d.]+) ms`))
	m.lag = parseFloat(find(m.body, `schedule lag: avg ([\d.]+)`))
}

// benchbookSentRate is the requests benchbook sent on time per second of
// its window: intended − late − dropped − undecided, where late means sent
// more than 10 ms after the intended start (loadgen's lateAfter). That is
// stricter than wrk2's figure (which counts a late request as sent), and
// deliberately so: a generator that sends in bursts behind schedule has
// not held the rate, even if every request left before the window closed.
// Intended minus dropped and undecided alone would count every late
// request, which is the check that could not fail. NaN when the raw file
// predates these counts (wlbench printed them from issue 16's fix on).
func benchbookSentRate(body string) float64 {
	onTime := parseFloat(kvFirst(body, "intended"))
	for _, k := range []string{"late", "dropped", "undecided"} {
		onTime -= parseFloat(kvFirst(body, k))
	}
	return onTime / parseFloat(kvFirst(body, "duration_s"))
}

// rateTolerance is how far below its rate an open loop may send and still
// count as holding it: issue 16's goal is the rate held within 1 %.
const rateTolerance = 0.01

// section describes how one kind of comparison is shown.
type section struct {
	name, title, peer string
	open              bool   // at a fixed rate: a tool that cannot hold it is not comparable
	latency           string // what the latency columns hold, in words
	peerLat, ourLat   func(m measurement) string
}

// ranTicks says which ticks benchbook's runs of a section reported
// (tick_ms): what auto chose, which changed with issue 38.
func ranTicks(set *rawSet, section string) string {
	var ticks []string
	for _, m := range set.runs {
		if t := kvFirst(m.body, "tick_ms"); m.section == section && m.tool == "benchbook" && t != "" && !slices.Contains(ticks, t) {
			ticks = append(ticks, t)
		}
	}
	if len(ticks) == 0 {
		return ""
	}
	slices.Sort(ticks)
	return ": it ran on ticks of " + strings.Join(ticks, ", ") + " ms"
}

// open2Sections are the wrk2 comparisons the raw files hold, one per rate
// and benchbook tick (sections "open2-RATE" and "open2-RATE-tickT"),
// slowest first.
func open2Sections(set *rawSet) []section {
	var names []string
	for _, m := range set.runs {
		if strings.HasPrefix(m.section, "open2-") && !slices.Contains(names, m.section) {
			names = append(names, m.section)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := open2Rate(a) - open2Rate(b); d != 0 {
			return int(math.Copysign(1, d))
		}
		return strings.Compare(a, b)
	})
	var out []section
	for _, name := range names {
		tick := "each request at its intended start"
		if _, t, ok := strings.Cut(strings.TrimPrefix(name, "open2-"), "-tick"); ok {
			tick = "benchbook waking once per " + t + " tick"
			if t == "auto" {
				tick = "benchbook's default tick (auto" + ranTicks(set, name) + ")"
			}
		}
		out = append(out, section{name, "HTTP open loop at " + num(open2Rate(name), 0) + " req/s, " + tick + ": wrk2 vs benchbook, whole-process CPU", "wrk2", true,
			"p50 / p99 from each request's intended start on both sides (wrk2's corrected histogram); client CPU of the whole process on both sides (benchbook without warmup)",
			func(m measurement) string { return ms(m.p50) + " / " + ms(m.p99) },
			func(m measurement) string {
				return ms(m.p50) + " / " + ms(m.p99) + " (service p50 " + ms(m.servicP50) + ")"
			}})
	}
	return out
}

var sections = []section{
	{"http", "HTTP closed loop: wrk vs benchbook", "wrk", false,
		"p50 / p99 of service time (both closed loops)",
		func(m measurement) string { return ms(m.p50) + " / " + ms(m.p99) },
		func(m measurement) string { return ms(m.p50) + " / " + ms(m.p99) }},
	{"httpfree", "HTTP closed loop, target and generator unpinned (the scheduler places both on the 2 cores): wrk vs benchbook", "wrk", false,
		"p50 / p99 of service time (both closed loops)",
		func(m measurement) string { return ms(m.p50) + " / " + ms(m.p99) },
		func(m measurement) string { return ms(m.p50) + " / " + ms(m.p99) }},
	{"open", "HTTP open loop at the fixed rate: vegeta vs benchbook", "vegeta", true,
		"p50 from the actual send (vegeta) beside benchbook's service-time p50; benchbook's p50 from the intended start after it",
		func(m measurement) string { return ms(m.p50) },
		func(m measurement) string { return ms(m.servicP50) + " (from intended start " + ms(m.p50) + ")" }},
	{"sql", "SQL point selects, closed loop: pgbench -S -M prepared vs benchbook", "pgbench", false,
		"mean latency on both sides (pgbench reports no percentile without per-transaction logs)",
		func(m measurement) string { return ms(m.mean) },
		func(m measurement) string { return ms(m.mean) }},
	{"sqlopen", "SQL point selects, open loop at the fixed rate: pgbench -R vs benchbook", "pgbench-R", true,
		"mean latency from the scheduled start on both sides (pgbench's includes its schedule lag, shown after it)",
		func(m measurement) string { return ms(m.mean) + " (lag " + ms(m.lag) + ")" },
		func(m measurement) string { return ms(m.mean) }},
	{"tags", "HTTP closed loop, a mix of 4 tagged requests: benchbook before tags (untagged) vs benchbook, whole-process CPU", "untagged", false,
		"p50 / p99 of service time (both closed loops)",
		func(m measurement) string { return ms(m.p50) + " / " + ms(m.p99) },
		func(m measurement) string { return ms(m.p50) + " / " + ms(m.p99) }},
	{"untagged", "HTTP closed loop, one untagged request: benchbook before tags (untagged) vs benchbook, whole-process CPU", "untagged", false,
		"p50 / p99 of service time (both closed loops)",
		func(m measurement) string { return ms(m.p50) + " / " + ms(m.p99) },
		func(m measurement) string { return ms(m.p50) + " / " + ms(m.p99) }},
	{"tagsopen", "HTTP open loop at the fixed rate, a mix of 4 tagged requests: benchbook before tags (untagged) vs benchbook, whole-process CPU", "untagged", true,
		"p50 / p99 from the intended start on both sides",
		func(m measurement) string { return ms(m.p50) + " / " + ms(m.p99) },
		func(m measurement) string { return ms(m.p50) + " / " + ms(m.p99) }},
}

// open2Rate is the rate in a section name "open2-RATE[-tickT]".
func open2Rate(name string) float64 {
	r, _, _ := strings.Cut(strings.TrimPrefix(name, "open2-"), "-")
	return parseFloat(r)
}

func ms(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return strconv.FormatFloat(x, 'f', 3, 64) + " ms"
}

func num(x float64, prec int) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "—"
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

func render(set *rawSet) string {
	var b strings.Builder
	writeHeader(&b, set)
	for _, s := range append(slices.Clone(sections), open2Sections(set)...) {
		writeSection(&b, set, s)
	}
	writeHot(&b, set)
	return b.String()
}

func writeHeader(b *strings.Builder, set *rawSet) {
	m := set.meta
	// Only a smoke run is a pipeline check; other labels just name a run.
	if strings.Contains(m["label"], "smoke") {
		fmt.Fprintf(b, "> **%s run** (label %q): a check that the pipeline works end to end, not a measurement to quote.\n\n", strings.ToUpper(m["label"]), m["label"])
	}
	lo, hi := loadRange(set.runs)
	fmt.Fprintf(b, "Raw outputs: `%s` (one file per run). Started %s at git %s; %s, %s cores, Linux %s, %s; %s.\n",
		filepath.ToSlash(set.dir), m["started"], m["git"], m["cpu"], m["cores"], m["kernel"], m["go"], m["pinning"])
	fmt.Fprintf(b, "%s rounds of %s per tool, %s connections, open loops at %s/s, pgbench scale %s (%s accounts); ",
		m["rounds"], m["duration"], m["connections"], m["rate"], m["scale"], accounts(m["scale"]))
	fmt.Fprintf(b, "each round runs both tools back to back, the peer first in odd rounds and benchbook first in even ones. ")
	fmt.Fprintf(b, "1-minute load average from %s to %s over the runs%s.\n\n", num(lo, 2), num(hi, 2), busyNote(hi, m["cores"]))
	b.WriteString("Client CPU is user + system time of the whole generator process over the requests it completed (benchbook: of the whole process, run without warmup, in sqlopen and open2 runs made since issue 16 and http runs since issue 38; otherwise of its measurement window). ")
	b.WriteString("Ratios are ours / the peer's within a round; the summary is the median of the per-round ratios.\n\n")
}

func accounts(scale string) string {
	s, err := strconv.Atoi(scale)
	if err != nil {
		return "?"
	}
	return strconv.FormatInt(int64(s)*100000, 10)
}

// busyNote says plainly when the box was not idle. The benchmark's own
// target and generator keep up to one task per core runnable, so a load
// up to the cores is theirs; above it something else competed with them.
func busyNote(hi float64, cores string) string {
	c, _ := strconv.ParseFloat(cores, 64)
	if c == 0 || math.IsNaN(hi) {
		return ""
	}
	if hi > c {
		return fmt.Sprintf(": **a busy box** (%s cores), so single rounds are noisy", cores)
	}
	return ""
}

func loadRange(runs []measurement) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, r := range runs {
		for _, l := range []float64{r.load1Before, r.load1At} {
			if !math.IsNaN(l) {
				lo, hi = math.Min(lo, l), math.Max(hi, l)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return nan, nan
	}
	return lo, hi
}

// roundPair is one round of a section: the peer's run and ours.
type roundPair struct {
	round      int
	peer, ours *measurement
}

func pairs(set *rawSet, s section) []roundPair {
	byRound := map[int]*roundPair{}
	for i := range set.runs {
		r := &set.runs[i]
		if r.section != s.name {
			continue
		}
		p := byRound[r.round]
		if p == nil {
			p = &roundPair{round: r.round}
			byRound[r.round] = p
		}
		if r.tool == "benchbook" {
			p.ours = r
		} else {
			p.peer = r
		}
	}
	var out []roundPair
	for _, p := range byRound {
		if p.peer != nil && p.ours != nil {
			out = append(out, *p)
		}
	}
	slices.SortFunc(out, func(a, b roundPair) int { return a.round - b.round })
	return out
}

func writeSection(b *strings.Builder, set *rawSet, s section) {
	ps := pairs(set, s)
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(b, "### %s\n\nLatency columns: %s.\n\n", s.title, s.latency)
	if a := set.meta[s.name+"_arrival"]; a != "" {
		fmt.Fprintf(b, "benchbook's arrivals: %s.\n\n", a)
	}
	if s.open {
		fmt.Fprintf(b, "A tool held the rate when it sent within %g %% of it (issue 16's goal); only rounds in which both did enter the summary. "+
			"The req/s columns give responses per second, then what was sent: benchbook's requests sent no more than 10 ms after their intended start, "+
			"per second of its window; %s.\n\n", rateTolerance*100, peerSent[s.peer])
	}
	fmt.Fprintf(b, "| round | order | load1 before → after | %s req/s | %s CPU µs/req | %s latency | benchbook req/s | benchbook CPU µs/req | benchbook latency | CPU ratio | rate ratio |\n", s.peer, s.peer, s.peer)
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	var cpuRatios, rateRatios []float64
	rate := parseFloat(set.meta["rate"])
	if strings.HasPrefix(s.name, "open2-") {
		rate = open2Rate(s.name) // each wrk2 comparison has its own rate
	}
	held := func(m *measurement) bool { return !s.open || m.sentRPS >= (1-rateTolerance)*rate }
	for _, p := range ps {
		order := s.peer + " first"
		if p.ours.slot < p.peer.slot {
			order = "benchbook first"
		}
		cr, rr := p.ours.cpuUsPerReq/p.peer.cpuUsPerReq, p.ours.rps/p.peer.rps
		if held(p.peer) && held(p.ours) {
			cpuRatios, rateRatios = append(cpuRatios, cr), append(rateRatios, rr)
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s× | %s× |\n",
			p.round, order, loads(p), rateCell(s, p.peer, held(p.peer)), num(p.peer.cpuUsPerReq, 2), failedOr(p.peer, s.peerLat),
			rateCell(s, p.ours, held(p.ours)), num(p.ours.cpuUsPerReq, 2), failedOr(p.ours, s.ourLat), num(cr, 2), num(rr, 2))
	}
	if len(cpuRatios) == 0 {
		writeWarnings(b, ps)
		fmt.Fprintf(b, "\nNo round in which both tools held the rate: no ratio to summarise.\n\n")
		return
	}
	writeWarnings(b, ps)
	fmt.Fprintf(b, "\nMedian over the %d of %d rounds %s: client CPU per request **%s×** %s's, rate **%s×**.\n\n",
		len(cpuRatios), len(ps), map[bool]string{true: "in which both held the rate", false: "run"}[s.open],
		num(median(cpuRatios), 2), s.peer, num(median(rateRatios), 2))
}

// writeWarnings lists what benchbook said about its own runs (a generator
// that fell behind, late or dropped requests), so a table never hides it.
func writeWarnings(b *strings.Builder, ps []roundPair) {
	for _, p := range ps {
		if w := kvFirst(p.ours.body, "warnings"); w != "" && w != "[]" {
			line := p.ours.body[strings.Index(p.ours.body, "warnings="):]
			line, _, _ = strings.Cut(line, "\n")
			fmt.Fprintf(b, "\n- round %d, benchbook %s", p.round, line)
		}
	}
	b.WriteString("\n")
}

// peerSent says what each peer's sent rate is, for the text under a title.
var peerSent = map[string]string{
	"wrk2":      "wrk2's requests per second of its run (it reports no count of late sends)",
	"vegeta":    "vegeta's attack rate",
	"pgbench-R": "pgbench's transactions per second (it reports no count of late ones without --latency-limit)",
}

// rateCell is a tool's req/s cell: in an open loop, with what it sent and
// whether that held the rate.
func rateCell(s section, m *measurement, held bool) string {
	if !s.open {
		return num(m.rps, 0)
	}
	if math.IsNaN(m.sentRPS) {
		return num(m.rps, 0) + " (sent not recorded: rate not checked)"
	}
	cell := num(m.rps, 0) + " (sent " + num(m.sentRPS, 0) + ")"
	if !held {
		cell += " (did not hold the rate)"
	}
	return cell
}

func loads(p roundPair) string {
	first, second := p.peer, p.ours
	if p.ours.slot < p.peer.slot {
		first, second = p.ours, p.peer
	}
	return num(first.load1Before, 2) + " → " + num(second.load1At, 2)
}

func failedOr(m *measurement, f func(measurement) string) string {
	if m.failed != "" {
		return "failed: " + m.failed
	}
	return f(*m)
}

// median ignores unknown values; NaN when none is known.
func median(xs []float64) float64 {
	var known []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			known = append(known, x)
		}
	}
	return stats.Median(known)
}

func writeHot(b *strings.Builder, set *rawSet) {
	for _, r := range set.runs {
		if r.section != "hot" {
			continue
		}
		// go test prints the package it benchmarked ("pkg: ..."): the
		// benchmarks moved from builtins/workload to its loadgen package.
		pkg := strings.TrimPrefix(find(r.body, `(?m)^pkg: (\S+)`), "github.com/benchbook/benchbook/")
		if pkg == "" {
			pkg = "package not recorded"
		}
		fmt.Fprintf(b, "### Hot path (`go test -bench`, %s)\n\n```text\n", pkg)
		for _, line := range strings.Split(r.body, "\n") {
			if strings.HasPrefix(line, "Benchmark") {
				b.WriteString(line + "\n")
			}
		}
		b.WriteString("```\n\n")
	}
}
