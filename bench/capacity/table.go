package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/benchbook/benchbook/runtime/stats"
)

// The generated section of RESULTS.md lies between these lines.
const (
	beginMark = "<!-- capbench: generated from raw files by go run ./bench/capacity -table DIR -write; do not edit -->"
	endMark   = "<!-- end of capbench's section -->"
)

// writeTables writes the tables of each of dirs (comma-separated), in
// order, into one generated section.
func writeTables(stdout io.Writer, dirs, write string) error {
	var b strings.Builder
	b.WriteString(beginMark + "\n")
	for _, dir := range strings.Split(dirs, ",") {
		if err := writeDir(&b, dir); err != nil {
			return err
		}
	}
	b.WriteString(endMark + "\n")
	if write == "" {
		_, err := io.WriteString(stdout, b.String())
		return err
	}
	return replaceSection(write, b.String())
}

// writeDir writes the tables of one raw directory.
func writeDir(b *strings.Builder, dir string) error {
	recs, err := readRecords(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		return err
	}
	var env struct {
		When     string `json:"when"`
		Searches int    `json:"searches"`
		Sweeps   int    `json:"sweeps"`
		Host     struct {
			CPU   string `json:"CPU"`
			Cores int    `json:"Cores"`
		} `json:"host"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "env.json")); err == nil {
		_ = json.Unmarshal(b, &env)
	}
	fmt.Fprintf(b, "\nRaw files: `bench/capacity/raw/%s` (records.jsonl: one line per search or sweep; env.json), measured %s.\n\n",
		filepath.Base(dir), env.When)
	for _, st := range studies() {
		rs := only(recs, st.Name)
		if len(rs) == 0 {
			continue
		}
		writeStudy(b, st, rs)
		if short := cutShort(rs, env.Searches, env.Sweeps); short != "" {
			fmt.Fprintf(b, "The run was cut short: %s.\n\n", short)
		}
	}
	return nil
}

func readRecords(path string) ([]record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

func only(rs []record, name string) []record {
	var out []record
	for _, r := range rs {
		if r.Study == name {
			out = append(out, r)
		}
	}
	return out
}

func writeStudy(b *strings.Builder, st study, rs []record) {
	think := "zero think time"
	if st.Think != "" {
		think = "users who think " + st.Think
	}
	fmt.Fprintf(b, "### %s: %d workers of %s, %s, %s ≤ %.3g ms\n\n", st.Name, st.Workers, st.Service, think, st.Metric, rs[0].Limit)
	fmt.Fprintf(b, "Each run %s after %s of warm-up; levels %d to %d users. The truth follows from the service the server gave during each search or sweep (mean %s): %s\n\n",
		st.Duration, st.Warmup, st.Lo, st.Hi, serviceRange(rs), truthText(st, rs))
	b.WriteString("| what | n | its interval met the truth | its value was in the truth | interval width, median | runs, median (range) | seconds, median (range) | refused / out of range | load average |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, kind := range []string{"search", "sweep-doubling", "sweep-every"} {
		var k []record
		for _, r := range rs {
			if r.Kind == kind {
				k = append(k, r)
			}
		}
		if len(k) == 0 {
			continue
		}
		held, exact, other := 0, 0, 0
		var widths, runs, secs, loads []float64
		for _, r := range k {
			if r.Status != "ok" {
				other++
			}
			lo, hi := truthOf(st, r)
			if r.Low != nil && r.High != nil && *r.Low <= hi && lo <= *r.High && r.Status == "ok" {
				held++
			}
			if r.Value != nil && lo <= *r.Value && *r.Value <= hi && r.Status == "ok" {
				exact++
			}
			if r.Low != nil && r.High != nil {
				widths = append(widths, *r.High-*r.Low+1)
			}
			runs = append(runs, float64(r.Runs))
			secs = append(secs, r.Seconds)
			loads = append(loads, r.Load1[0], r.Load1[1])
		}
		fmt.Fprintf(b, "| %s | %d | %d (%.0f %%) | %d | %s | %s | %s | %d | %s |\n", label(kind), len(k), held, 100*float64(held)/float64(len(k)), exact,
			usersText(widths), rangeText(runs, "%.0f"), rangeText(secs, "%.0f"), other, spanText(loads))
	}
	b.WriteString("\n")
}

// truthOf is the range of capacities r's service allows (study.truth),
// judged now from the raw figures, not from the truth the record kept.
func truthOf(st study, r record) (lo, hi float64) {
	st.Limit = r.Limit
	sd := math.NaN()
	if r.SD != nil {
		sd = *r.SD
	}
	return st.truth(r.Service, sd)
}

// truthText says how the study's truth was found and its range over rs.
func truthText(st study, rs []record) string {
	var los, his []float64
	withSD := 0
	for _, r := range rs {
		lo, hi := truthOf(st, r)
		los, his = append(los, lo), append(his, hi)
		if r.SD != nil {
			withSD++
		}
	}
	span := fmt.Sprintf("%g–%g users", slices.Min(los), slices.Max(his))
	if slices.Min(los) == slices.Max(his) {
		span = fmt.Sprintf("%g users", slices.Min(los))
	}
	if st.Metric == "mean" {
		return fmt.Sprintf("the response-time law's crossing (L + Z)·c/m within 2 %%, %s.", span)
	}
	how := "the largest N whose ceil(N/c) services, at the mean, stay within the limit, down to the largest whose sum's p99 (mean plus 2.33 sd) does"
	if withSD < len(rs) {
		how += fmt.Sprintf(" (%d of %d records have no sd: theirs is the first alone)", len(rs)-withSD, len(rs))
	}
	return fmt.Sprintf("%s, %s.", how, span)
}

// cutShort says which kinds of record a study holds fewer of than the run
// asked for (env.json's searches and sweeps), or "".
func cutShort(rs []record, searches, sweeps int) string {
	var missing []string
	for _, kind := range []string{"search", "sweep-doubling", "sweep-every"} {
		want := sweeps
		if kind == "search" {
			want = searches
		}
		n := 0
		for _, r := range rs {
			if r.Kind == kind {
				n++
			}
		}
		if n < want {
			missing = append(missing, fmt.Sprintf("%d of the %d %s records asked for", n, want, kind))
		}
	}
	return strings.Join(missing, ", ")
}

func label(kind string) string {
	switch kind {
	case "search":
		return "capacity search (95 % confidence)"
	case "sweep-doubling":
		return "plain sweep by doubling, one run a level"
	}
	return "plain sweep of every level, one run a level"
}

// usersText is the median of xs, a count of users.
func usersText(xs []float64) string {
	if len(xs) == 0 {
		return "—"
	}
	if m := stats.Median(xs); m != 1 {
		return fmt.Sprintf("%.0f users", m)
	}
	return "1 user"
}

func rangeText(xs []float64, f string) string {
	return fmt.Sprintf(f+" ("+f+"–"+f+")", stats.Median(xs), slices.Min(xs), slices.Max(xs))
}

func spanText(xs []float64) string {
	return fmt.Sprintf("%.1f–%.1f", slices.Min(xs), slices.Max(xs))
}

func serviceRange(rs []record) string {
	var xs []float64
	for _, r := range rs {
		if !math.IsNaN(r.Service) {
			xs = append(xs, r.Service)
		}
	}
	if len(xs) == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.3f–%.3f ms", slices.Min(xs), slices.Max(xs))
}

// replaceSection puts section in place of the generated one in path, or at
// its end.
func replaceSection(path, section string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	s := string(old)
	i, j := strings.Index(s, beginMark), strings.Index(s, endMark)
	if i >= 0 && j > i {
		s = s[:i] + section + s[j+len(endMark)+1:]
	} else {
		s += "\n" + section
	}
	return os.WriteFile(path, []byte(s), 0o644)
}
