package profile

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// ScriptFields are the fields ParseScript reads, in the form perf script's
// -F takes them. perf prints one block per sample, a header line and one
// line per frame, innermost first:
//
//	hotserver 19037/19040    2004008
//		          27438d main.hotA (/tmp/hotserver)
//		          232289 net/http.HandlerFunc.ServeHTTP (/tmp/hotserver)
//	ffffffff81000e06 asm_sysvec_apic_timer_interrupt ([kernel.kallsyms])
const ScriptFields = "comm,pid,tid,period,ip,sym,dso"

// ParseScript folds perf script output (ScriptFields, blocks separated by
// blank lines) into a profile. defaultPeriodNs stands for a sample whose
// header carries no period. keep, when not nil, says which process's
// samples to keep (by pid). Malformed input is an error naming the line,
// never a panic and never a sample silently dropped.
func ParseScript(r io.Reader, defaultPeriodNs int64, keep func(pid int) bool) (*Profile, error) {
	f := newFolder()
	err := parseScript(r, defaultPeriodNs, func(s *sample) {
		if keep == nil || keep(s.pid) {
			f.addSample(s)
		}
	})
	if err != nil {
		return nil, err
	}
	p := f.profile()
	p.Source, p.Event, p.PeriodNs = "perf", Event, defaultPeriodNs
	return p, nil
}

// sample is the block being read.
type sample struct {
	pid    int
	period int64
	frames []string // innermost first, as perf prints them
	named  int      // frames that resolved to a symbol
	leaf   bool     // the innermost frame resolved
}

// parseScript hands every sample of perf script's output to fn.
func parseScript(r io.Reader, defaultPeriodNs int64, fn func(*sample)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var cur *sample
	flush := func() {
		if cur != nil {
			fn(cur)
		}
		cur = nil
	}
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case line[0] == ' ' || line[0] == '\t':
			if cur == nil {
				return fmt.Errorf("perf script: line %d: a frame line before any sample header: %q", n, clip(line))
			}
			name, named, err := parseFrame(line)
			if err != nil {
				return fmt.Errorf("perf script: line %d: %w", n, err)
			}
			if len(cur.frames) == 0 {
				cur.leaf = named
			}
			cur.frames = append(cur.frames, name)
			if named {
				cur.named++
			}
		default:
			flush()
			s, err := parseHeader(line, defaultPeriodNs)
			if err != nil {
				return fmt.Errorf("perf script: line %d: %w", n, err)
			}
			cur = s
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("perf script: %w", err)
	}
	flush()
	return nil
}

// addSample adds one sample, its frames turned root first.
func (f *folder) addSample(s *sample) {
	frames := s.frames
	if len(frames) == 0 {
		frames = []string{"[unknown]"}
	}
	root := make([]string, len(frames))
	for i, fr := range frames {
		root[len(frames)-1-i] = fr
	}
	f.add(root, 1, s.period)
	f.frames += int64(len(s.frames))
	f.resolved += int64(s.named)
	if s.leaf {
		f.leaves++
	}
	f.pids[s.pid] = true
}

// parseHeader reads "comm pid/tid period": comm may hold spaces, so the
// pid/tid token is found from the right.
func parseHeader(line string, defaultPeriodNs int64) (*sample, error) {
	toks := strings.Fields(line)
	for i := len(toks) - 1; i >= 0; i-- {
		pid, ok := pidTid(toks[i])
		if !ok {
			continue
		}
		s := &sample{pid: pid, period: defaultPeriodNs}
		if i+1 < len(toks) {
			p, err := strconv.ParseInt(strings.TrimSuffix(toks[i+1], ":"), 10, 64)
			if err != nil || p <= 0 {
				return nil, fmt.Errorf("sample header %q: period %q is not a positive number", clip(line), toks[i+1])
			}
			s.period = p
		}
		return s, nil
	}
	return nil, fmt.Errorf("sample header %q has no pid/tid", clip(line))
}

func pidTid(tok string) (int, bool) {
	a, b, ok := strings.Cut(tok, "/")
	if !ok {
		return 0, false
	}
	pid, err1 := strconv.Atoi(a)
	_, err2 := strconv.Atoi(b)
	return pid, err1 == nil && err2 == nil && pid >= 0
}

// parseFrame reads "addr sym (dso)"; sym may hold spaces and parentheses
// (C++), so the dso is the last parenthesised group. A frame perf could
// not name becomes "[dso]" (its base name), as stackcollapse-perf names
// it, and counts as unresolved.
func parseFrame(line string) (name string, named bool, err error) {
	t := strings.TrimSpace(line)
	addr, rest, _ := strings.Cut(t, " ")
	if _, perr := strconv.ParseUint(addr, 16, 64); perr != nil {
		return "", false, fmt.Errorf("frame %q: %q is not a hex address", clip(t), clip(addr))
	}
	rest = strings.TrimSpace(rest)
	sym, dso := rest, ""
	if strings.HasSuffix(rest, ")") {
		if i := strings.LastIndex(rest, " ("); i >= 0 {
			sym, dso = strings.TrimSpace(rest[:i]), rest[i+2:len(rest)-1]
		} else if strings.HasPrefix(rest, "(") {
			sym, dso = "", rest[1:len(rest)-1]
		}
	}
	if sym == "" || sym == "[unknown]" {
		return unknownFrame(dso), false, nil
	}
	return strings.ReplaceAll(sym, ";", ":"), true, nil
}

func unknownFrame(dso string) string {
	if dso == "" || dso == "[unknown]" {
		return "[unknown]"
	}
	if strings.HasPrefix(dso, "[") {
		return dso // [kernel.kallsyms], [vdso]
	}
	return "[" + strings.ReplaceAll(filepath.Base(dso), ";", ":") + "]"
}
