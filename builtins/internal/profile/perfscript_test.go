package profile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The recordings under testdata are perf script output of real processes
// on this kind of machine (task-clock, -c 2004008, -g): the hot server
// under wrk, and a PostgreSQL 15 backend running eight sequential scans
// with a LIKE filter. Beside each, perf report's own per-symbol figures
// for the same perf.data (--children --sort sym), the oracle.
var recordings = []string{"hotserver", "postgres-seqscan"}

func readRecording(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open("testdata/" + name + ".script.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type reportLine struct{ children, self float64 }

var (
	reportRow     = regexp.MustCompile(`^\s+([0-9.]+)%\s+([0-9.]+)%\s+\[[.k]\]\s+(.+?)\s*$`)
	reportSamples = regexp.MustCompile(`^# Samples: (\d+)`)
)

// readReport reads perf report --children --sort sym: per symbol, the
// share of samples with it on the stack and as the leaf, in percent.
func readReport(t *testing.T, name string) (map[string]reportLine, int64) {
	t.Helper()
	f, err := os.Open("testdata/" + name + ".report")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]reportLine{}
	var samples int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := reportSamples.FindStringSubmatch(sc.Text()); m != nil {
			samples, _ = strconv.ParseInt(m[1], 10, 64)
		}
		m := reportRow.FindStringSubmatch(sc.Text())
		if m == nil || strings.HasPrefix(m[3], "0x") || strings.HasPrefix(m[3], "0000") {
			continue // an address perf could not name: ours is "[dso]"
		}
		c, _ := strconv.ParseFloat(m[1], 64)
		s, _ := strconv.ParseFloat(m[2], 64)
		out[m[3]] = reportLine{c, s}
	}
	return out, samples
}

// Our fold must agree with perf's own report on the same recording for
// every symbol perf named: the share of samples with it as the leaf (self)
// and anywhere on the stack (children), to the report's two decimals.
func TestParseScriptAgreesWithPerfReport(t *testing.T) {
	for _, name := range recordings {
		t.Run(name, func(t *testing.T) {
			p, err := ParseScript(bytes.NewReader(readRecording(t, name)), 2004008, nil)
			if err != nil {
				t.Fatal(err)
			}
			report, samples := readReport(t, name)
			if p.Samples != samples {
				t.Errorf("%d samples parsed, perf report counts %d", p.Samples, samples)
			}
			fns := functionsByName(p)
			compared := 0
			for sym, want := range report {
				got, ok := fns[sym]
				if !ok {
					t.Errorf("perf report names %q (%.2f %%), the fold does not", sym, want.children)
					continue
				}
				compared++
				if d := math.Abs(100*got.Total - want.children); d > 0.0051 {
					t.Errorf("%s: total %.4f %%, perf report %.2f %%", sym, 100*got.Total, want.children)
				}
				if d := math.Abs(100*got.Self - want.self); d > 0.0051 {
					t.Errorf("%s: self %.4f %%, perf report %.2f %%", sym, 100*got.Self, want.self)
				}
			}
			t.Logf("%d samples, %d stacks, %d symbols compared, resolved frames %.3f, resolved leaves %.3f",
				p.Samples, len(p.Stacks), compared, p.ResolvedShare(), p.ResolvedLeafShare())
			if compared < 20 {
				t.Errorf("only %d symbols compared", compared)
			}
		})
	}
}

// What a reader of the PostgreSQL profile needs: the scan under the
// executor, and the unnamed static functions kept as "[postgres]" rather
// than dropped.
func TestParseScriptPostgres(t *testing.T) {
	p, err := ParseScript(bytes.NewReader(readRecording(t, "postgres-seqscan")), 2004008, nil)
	if err != nil {
		t.Fatal(err)
	}
	fns := functionsByName(p)
	if fns["ExecScan"].Total < 0.5 || fns["textlike"].Total <= 0 {
		t.Errorf("ExecScan %.3f, textlike %.3f of the samples", fns["ExecScan"].Total, fns["textlike"].Total)
	}
	if fns["[postgres]"].Total <= 0 {
		t.Errorf("no [postgres] frames: the unresolved static functions vanished")
	}
	if r := p.ResolvedShare(); !(r > 0.3 && r < 1) {
		t.Errorf("resolved share %.3f: PostgreSQL's static functions have no symbol here", r)
	}
}

func TestParseScriptFrames(t *testing.T) {
	in := "Web Content 12/14   2004008\n" +
		"\t    7f00 std::vector<int, std::allocator<int> >::push_back(int const&) (/usr/lib/libx.so.6)\n" +
		"\t    7f01 [unknown] (/usr/lib/postgresql/15/bin/postgres)\n" +
		"\t    7f02 [unknown] ([unknown])\n" +
		"\tffffffff81000e06 asm_sysvec_apic_timer_interrupt ([kernel.kallsyms])\n" +
		"\t    7f03 a;b (/x)\n" +
		"\n" +
		"postgres 9/9 4000000\n" +
		"\t    7f04 [unknown] ([vdso])\n"
	p, err := ParseScript(strings.NewReader(in), 2004008, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := string(p.Folded())
	want := "[vdso] 1\n" +
		"a:b;asm_sysvec_apic_timer_interrupt;[unknown];[postgres];std::vector<int, std::allocator<int> >::push_back(int const&) 1\n"
	if got != want {
		t.Errorf("folded:\n%s\nwant:\n%s", got, want)
	}
	if p.Samples != 2 || p.CPUNs != 2004008+4000000 || p.Frames != 6 || p.Resolved != 3 || p.ResolvedLeaves != 1 {
		t.Errorf("samples %d, cpu %d, frames %d, resolved %d, leaves %d", p.Samples, p.CPUNs, p.Frames, p.Resolved, p.ResolvedLeaves)
	}
	if len(p.PIDs) != 2 || p.PIDs[0] != 9 || p.PIDs[1] != 12 {
		t.Errorf("pids %v", p.PIDs)
	}
	only9, _ := ParseScript(strings.NewReader(in), 2004008, func(pid int) bool { return pid == 9 })
	if only9.Samples != 1 {
		t.Errorf("keep: %d samples", only9.Samples)
	}
}

func TestParseScriptErrors(t *testing.T) {
	for in, want := range map[string]string{
		"\t 7f00 main (/x)\n":            "line 1: a frame line before any sample header",
		"comm 1/1 100\n\tzz main (/x)\n": "line 2: frame .* not a hex address",
		"comm nopid 100\n":               "line 1: sample header .* has no pid/tid",
		"comm 1/1 -5\n":                  "period \"-5\" is not a positive number",
	} {
		_, err := ParseScript(strings.NewReader(in), 1, nil)
		if err == nil || !regexp.MustCompile(want).MatchString(err.Error()) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

// Folded text is what a user downloads and other tools read back: it must
// parse back to the same stacks and counts.
func TestFoldedRoundTrip(t *testing.T) {
	for _, name := range recordings {
		p, err := ParseScript(bytes.NewReader(readRecording(t, name)), 2004008, nil)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseFolded(bytes.NewReader(p.Folded()), 2004008)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back.Folded(), p.Folded()) || back.Samples != p.Samples || back.CPUNs != p.CPUNs {
			t.Errorf("%s: folded text does not round-trip (%d -> %d samples)", name, p.Samples, back.Samples)
		}
	}
}

// checkInvariants holds for every profile the parser returns.
func checkInvariants(t *testing.T, p *Profile, headers int64) {
	t.Helper()
	var n, cpu int64
	for _, s := range p.Stacks {
		if len(s.Frames) == 0 || s.Samples <= 0 {
			t.Fatalf("empty stack or count: %+v", s)
		}
		for _, f := range s.Frames {
			if f == "" || strings.ContainsAny(f, ";\n") {
				t.Fatalf("frame %q cannot be folded", f)
			}
		}
		n += s.Samples
		cpu += s.CPUNs
	}
	if n != p.Samples || cpu != p.CPUNs || n != headers {
		t.Fatalf("stacks hold %d samples, profile says %d, input has %d", n, p.Samples, headers)
	}
	if p.Resolved > p.Frames || p.ResolvedLeaves > p.Samples {
		t.Fatalf("resolved %d of %d frames, %d of %d leaves", p.Resolved, p.Frames, p.ResolvedLeaves, p.Samples)
	}
	back, err := ParseFolded(bytes.NewReader(p.Folded()), 1)
	if err != nil || back.Samples != p.Samples {
		t.Fatalf("folded text does not parse back: %v", err)
	}
}

// FuzzParseScript mutates real recordings: the parser never panics, and
// what it accepts keeps every sample (one per header line) in its stacks.
func FuzzParseScript(f *testing.F) {
	for _, name := range recordings {
		data := readRecording(f, name)
		blocks := strings.Split(string(data), "\n\n")
		for i := 0; i < len(blocks); i += len(blocks) / 8 {
			f.Add([]byte(strings.Join(blocks[i:min(i+3, len(blocks))], "\n\n")))
		}
	}
	f.Add([]byte("x 1/1\n\t1 [unknown] (\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseScript(bytes.NewReader(data), 1000, nil)
		if err != nil {
			return
		}
		var headers int64
		for _, l := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(l) != "" && l[0] != ' ' && l[0] != '\t' {
				headers++
			}
		}
		checkInvariants(t, p, headers)
	})
}
