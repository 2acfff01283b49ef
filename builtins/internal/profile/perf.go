package profile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/benchbook/benchbook/runtime/bytesize"
	"github.com/benchbook/benchbook/runtime/procfs"
)

// Target is what a perf sampling covers: the processes a Lister names (and
// every process they start in the window), or every process of a cgroup.
type Target struct {
	// Name is the target in errors and warnings ("the demo", "postgres").
	Name string
	// Lister names the processes; it is read at the start and every
	// PerfOptions.Poll while sampling runs.
	Lister Lister
	// Cgroup, instead of Lister, is a cgroup directory in a hierarchy that
	// has the perf_event controller (the cgroup v2 one on these machines):
	// perf samples whatever runs in it, processes that join later included.
	Cgroup string
	// Keep, when not nil, says which processes' samples count: a command
	// that benchbook itself starts in the window is followed by sampling
	// benchbook's own process, whose samples Keep then drops.
	Keep func(pid int) bool
}

// PerfOptions shape a perf sampling; the zero value is the default.
type PerfOptions struct {
	// Perf is the perf binary; "" looks "perf" up on PATH.
	Perf string
	// Hz is samples per second of CPU time; 0 means DefaultHz.
	Hz int
	// MaxBytes bounds perf's data for the window, in memory (nothing is
	// written to disk); at seven eighths of it sampling stops early and the
	// profile says so. 0 means DefaultMaxBytes.
	MaxBytes int64
	// Poll is how often the Lister is re-read; 0 means DefaultPoll.
	Poll time.Duration
	// MaxExtra bounds the extra perf processes started for processes that
	// join the target in the window without descending from one already
	// sampled; past it they are named in a warning. 0 means DefaultMaxExtra.
	MaxExtra int
	// Armed starts perf with sampling off: StartPerf returns once perf has
	// its events open, and Enable opens the window. A caller whose window
	// begins later (after a warm-up) starts perf first, so the window
	// opens exactly when it should however long perf takes to start.
	Armed bool
}

// Event is the software event perf samples on: the CPU time of each task,
// at a fixed period (-c), so every sample stands for the same CPU time
// and samples × period is the CPU the target used: against /proc's
// utime + stime at load 10-24, 8-13 % below for an HTTP server switching
// context 2-3 times a request (4-7 µs a switch), -6 to +2 % for a CPU-bound
// loop, at 499 Hz (bench/profile/accuracy.sh). cpu-clock, the other software clock, was not
// inherited here by processes that a sleeping parent (a shell) forked
// after perf attached: their samples were missing altogether.
const Event = "task-clock"

// The defaults. 499 Hz is not a divisor of the kernel's or Go's timer
// rates, so samples do not beat with periodic work; 64 MiB holds about
// 150,000 samples with their stacks (five minutes of one busy core).
const (
	DefaultHz       = 499
	DefaultMaxBytes = 64 << 20
	DefaultPoll     = 100 * time.Millisecond
	DefaultMaxExtra = 8
)

// PerfRecording is a perf sampling under way.
type PerfRecording struct {
	ctx    context.Context
	bin    string
	target Target
	o      PerfOptions
	period int64
	args   []string // the sampling options every perf process shares

	mu        sync.Mutex
	procs     []*perfProc // generation 0 first
	attached  []map[int]bool
	known     map[int]bool
	missed    []int
	missedErr error
	stopped   bool

	enabled bool      // the window is open (or was: Disable does not reset it)
	start   time.Time // when the window opened
	end     time.Time // when it closed; zero while open

	stopOnce sync.Once
	quit     chan struct{}
	pollDone chan struct{}
	ctxDone  chan struct{}
	warnings []string
}

// StartPerf starts sampling the target with perf and returns once
// sampling is on. ctx ends it early: perf is stopped and Stop returns
// ctx's error. A missing perf, a kernel that forbids sampling and a target
// with no process are errors here, never an empty profile later.
func StartPerf(ctx context.Context, t Target, o PerfOptions) (*PerfRecording, error) {
	o = o.withDefaults()
	bin, err := exec.LookPath(o.Perf)
	if err != nil {
		return nil, fmt.Errorf("profile: %s not found: install Debian's linux-perf package (apt-get install linux-perf): %w", o.Perf, err)
	}
	if (t.Lister == nil) == (t.Cgroup == "") {
		return nil, errors.New("profile: a target needs exactly one of a process lister and a cgroup")
	}
	r := &PerfRecording{ctx: ctx, bin: bin, target: t, o: o, period: 1_000_000_000 / int64(o.Hz),
		known: map[int]bool{}, quit: make(chan struct{}), pollDone: make(chan struct{}), ctxDone: make(chan struct{})}
	r.args = []string{"-e", Event, "-c", fmt.Sprint(r.period), "-g"}
	if os.Geteuid() != 0 && paranoidLevel() >= 2 {
		r.warnings = append(r.warnings, fmt.Sprintf("kernel frames are not sampled: kernel.perf_event_paranoid = %s lets a user who is not root sample user space only", paranoid()))
	}
	if t.Cgroup != "" {
		err = r.startCgroup()
	} else {
		err = r.startPIDs()
	}
	if err != nil {
		return nil, err
	}
	if !o.Armed {
		r.enabled, r.start = true, r.procs[0].enabledAt
	}
	go r.poll()
	go r.watch()
	return r, nil
}

// Enable opens the window of an armed recording: sampling starts in every
// perf at once (one command on each one's control pipe, acknowledged). A
// recording started unarmed is open already, and Enable does nothing.
func (r *PerfRecording) Enable() error {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return fmt.Errorf("profile: sampling %s: stopped before its window opened", r.name())
	}
	if r.enabled {
		r.mu.Unlock()
		return nil
	}
	r.enabled, r.start = true, time.Now()
	procs := slices.Clone(r.procs)
	r.mu.Unlock()
	for _, p := range procs {
		if err := p.command("enable", stopTimeout); err != nil {
			return fmt.Errorf("profile: sampling %s: enable: %w", r.name(), err)
		}
	}
	return nil
}

// Disable closes the window: sampling stops in every perf at once and no
// process is attached any more; Stop then collects what was sampled. A
// caller whose window ends before it has time to fold (a measurement
// with observers to stop) disables first; Stop alone disables too.
func (r *PerfRecording) Disable() {
	r.stopOnce.Do(func() { close(r.quit) })
	<-r.pollDone
	r.mu.Lock()
	procs := slices.Clone(r.procs)
	open := r.enabled && r.end.IsZero() && !r.stopped
	if open {
		r.end = time.Now()
	}
	r.mu.Unlock()
	if !open {
		return
	}
	for _, p := range procs {
		p.disable()
	}
}

func (o PerfOptions) withDefaults() PerfOptions {
	if o.Perf == "" {
		o.Perf = "perf"
	}
	if o.Hz <= 0 {
		o.Hz = DefaultHz
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.MaxExtra <= 0 {
		o.MaxExtra = DefaultMaxExtra
	}
	return o
}

func (r *PerfRecording) name() string {
	if r.target.Name != "" {
		return r.target.Name
	}
	if r.target.Cgroup != "" {
		return "cgroup " + r.target.Cgroup
	}
	return "the target"
}

func (r *PerfRecording) startCgroup() error {
	name, err := perfCgroupName(r.target.Cgroup)
	if err != nil {
		return err
	}
	args := append(slices.Clone(r.args), "-a", "-G", name)
	p, err := startPerfProc(r.bin, args, r.o.MaxBytes, !r.o.Armed)
	if err != nil {
		return fmt.Errorf("%w (sampling %s)", err, r.name())
	}
	r.procs, r.attached = []*perfProc{p}, []map[int]bool{{}}
	return nil
}

// startPIDs attaches perf to the lister's processes. perf follows every
// process and thread they start after it attached (perf's inherit), so a
// PostgreSQL backend forked in the window is sampled from its first
// instruction; a process that exits between the listing and the attach
// makes perf refuse the whole list, so the list is read again.
func (r *PerfRecording) startPIDs() error {
	var last error
	for range 3 {
		pids, err := r.list()
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return fmt.Errorf("profile: %s has no running process to sample", r.name())
		}
		p, err := startPerfProc(r.bin, append(slices.Clone(r.args), "-p", joinPIDs(pids)), r.o.MaxBytes, !r.o.Armed)
		if err == nil {
			set := map[int]bool{}
			for _, pid := range pids {
				set[pid], r.known[pid] = true, true
			}
			r.procs, r.attached = []*perfProc{p}, []map[int]bool{set}
			return nil
		}
		if !errors.Is(err, errVanished) && slices.ContainsFunc(pids, alive) {
			return fmt.Errorf("%w (sampling %s)", err, r.name())
		}
		last = err
	}
	return fmt.Errorf("%w (sampling %s, three times)", last, r.name())
}

// list reads the lister and keeps the processes that run.
func (r *PerfRecording) list() ([]int, error) {
	pids, err := r.target.Lister()
	if err != nil {
		return nil, fmt.Errorf("profile: listing the processes of %s: %w", r.name(), err)
	}
	var out []int
	for _, pid := range pids {
		if pid > 0 && alive(pid) && !slices.Contains(out, pid) {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out, nil
}

func joinPIDs(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ",")
}

// poll re-reads the lister while sampling runs and attaches a new perf to
// the processes no running perf follows.
func (r *PerfRecording) poll() {
	defer close(r.pollDone)
	if r.target.Lister == nil {
		return
	}
	t := time.NewTicker(r.o.Poll)
	defer t.Stop()
	for {
		r.catchUp()
		select {
		case <-r.quit:
			return
		case <-t.C:
		}
	}
}

// catchUp attaches the processes that joined the target since the last
// read. A process that descends from a sampled one and started after that
// perf was enabled is already followed; any other (started before, or
// outside the tree: a command run in a container) gets a perf of its own.
// Where both cover a process, Stop keeps the earlier perf's samples of it,
// which cover it from its start, so nothing is counted twice.
func (r *PerfRecording) catchUp() {
	pids, err := r.list()
	if err != nil {
		return // the target is going away; Stop says what was sampled
	}
	fresh, ok := r.freshPIDs(pids)
	if !ok {
		return
	}
	// perf is started outside the lock: it can take seconds, and Enable
	// and Disable must not wait for it.
	p, err := startPerfProc(r.bin, append(slices.Clone(r.args), "-p", joinPIDs(fresh)), r.o.MaxBytes, false)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.missed, r.missedErr = append(r.missed, fresh...), err
		return
	}
	if r.stopped || !r.end.IsZero() { // the window closed while perf started
		p.kill()
		r.missed = append(r.missed, fresh...)
		return
	}
	if r.enabled {
		if err := p.command("enable", stopTimeout); err != nil {
			p.kill()
			r.missed, r.missedErr = append(r.missed, fresh...), err
			return
		}
	}
	set := map[int]bool{}
	for _, pid := range fresh {
		set[pid] = true
	}
	r.procs, r.attached = append(r.procs, p), append(r.attached, set)
}

// freshPIDs are the processes that joined the target since the last read
// and that no running perf follows; false when there are none to attach
// (or no room for another perf: they are then named as missed).
func (r *PerfRecording) freshPIDs(pids []int) ([]int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || !r.end.IsZero() {
		return nil, false
	}
	var fresh []int
	for _, pid := range pids {
		if r.known[pid] {
			continue
		}
		r.known[pid] = true
		if !r.followed(pid) {
			fresh = append(fresh, pid)
		}
	}
	if len(fresh) == 0 {
		return nil, false
	}
	if len(r.procs)-1 >= r.o.MaxExtra {
		r.missed = append(r.missed, fresh...)
		return nil, false
	}
	return fresh, true
}

// followed reports whether a running perf follows pid by inheritance.
func (r *PerfRecording) followed(pid int) bool {
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return true // gone already
	}
	for g, set := range r.attached {
		// a tick of slack: start times are in 10 ms ticks
		if int64(st.StartTime) > r.procs[g].startTick+1 && descendsFrom(pid, set) {
			return true
		}
	}
	return false
}

// watch stops perf when ctx ends first.
func (r *PerfRecording) watch() {
	select {
	case <-r.ctx.Done():
		r.abort()
	case <-r.quit:
	}
	close(r.ctxDone)
}

func (r *PerfRecording) abort() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	r.stopped = true
	for _, p := range r.procs {
		p.kill()
	}
}

// Stop ends the window: sampling is disabled in every perf at once, perf
// writes the rest of its data and exits, and the samples are folded into a
// profile. Nothing perf wrote remains anywhere.
// Stop may be called once.
func (r *PerfRecording) Stop() (*Profile, error) {
	r.Disable()
	<-r.ctxDone
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return nil, fmt.Errorf("profile: sampling %s: %w", r.name(), r.ctx.Err())
	}
	r.stopped = true
	procs, enabled := r.procs, r.enabled
	window := r.end.Sub(r.start)
	r.mu.Unlock()
	var errs []error
	for _, p := range procs {
		if err := p.finish(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w (sampling %s)", errors.Join(errs...), r.name())
	}
	if !enabled {
		return nil, fmt.Errorf("profile: sampling %s: its window never opened (Enable was not called)", r.name())
	}
	p, err := r.fold(procs)
	if err != nil {
		return nil, err
	}
	p.Window = window
	return p, nil
}

// fold runs perf script on every perf's data and keeps each process's
// samples from the earliest perf that has any of it.
func (r *PerfRecording) fold(procs []*perfProc) (*Profile, error) {
	owner := map[int]int{} // pid -> generation whose samples count
	perGen := make([][]*sample, len(procs))
	var warnings []string
	for g, p := range procs {
		w, err := script(context.WithoutCancel(r.ctx), r.bin, p.out.Bytes(), r.period, func(s *sample) {
			perGen[g] = append(perGen[g], s)
			if _, ok := owner[s.pid]; !ok {
				owner[s.pid] = g
			}
		})
		if err != nil {
			return nil, fmt.Errorf("%w (sampling %s)", err, r.name())
		}
		warnings = append(warnings, w...)
		if p.out.Full() {
			warnings = append(warnings, fmt.Sprintf("sampling stopped before the window ended: perf's data reached the bound of %s (PerfOptions.MaxBytes)", bytesize.Format(r.o.MaxBytes)))
		}
	}
	f := newFolder()
	for g, ss := range perGen {
		for _, s := range ss {
			if owner[s.pid] == g && (r.target.Keep == nil || r.target.Keep(s.pid)) {
				f.addSample(s)
			}
		}
	}
	prof := f.profile()
	prof.Source, prof.Event, prof.PeriodNs = "perf", Event, r.period
	prof.Warnings = append(append(slices.Clone(r.warnings), warnings...), r.missedWarning()...)
	return prof, nil
}

func (r *PerfRecording) missedWarning() []string {
	if len(r.missed) == 0 {
		return nil
	}
	why := fmt.Sprintf("past %d extra perf processes", r.o.MaxExtra)
	if r.missedErr != nil {
		why = r.missedErr.Error()
	}
	return []string{fmt.Sprintf("%d process(es) of %s joined in the window and were not sampled (%s): pids %s",
		len(r.missed), r.name(), why, joinPIDs(r.missed))}
}
