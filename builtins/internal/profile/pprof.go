package profile

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	pprof "github.com/google/pprof/profile"

	"github.com/benchbook/benchbook/runtime/bytesize"
)

// PprofOptions shape a read of a Go target's net/http/pprof CPU profile.
type PprofOptions struct {
	// Seconds is how long the target profiles itself: net/http/pprof takes
	// whole seconds and starts when the request arrives, so the caller
	// sets it to the window's length, rounded up. Required.
	Seconds int
	// Client makes the request; nil means a client with no timeout beyond
	// Seconds plus a margin.
	Client *http.Client
	// MaxBytes bounds the profile read; 0 means DefaultMaxBytes.
	MaxBytes int64
}

// PprofRecording is a pprof CPU profile the target is taking.
type PprofRecording struct {
	url    string
	o      PprofOptions
	start  time.Time
	done   chan struct{}
	body   []byte
	err    error
	cancel context.CancelFunc
}

// StartPprof asks the Go target serving net/http/pprof at profileURL (its
// /debug/pprof/profile) for a CPU profile of o.Seconds. The target samples
// itself (its own goroutines, at 100 Hz, without kernel frames) and needs
// to cooperate; perf (StartPerf) needs neither and is the default.
func StartPprof(ctx context.Context, profileURL string, o PprofOptions) (*PprofRecording, error) {
	if o.Seconds <= 0 {
		return nil, fmt.Errorf("profile: pprof needs the window's length in whole seconds, got %d", o.Seconds)
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	u, err := url.Parse(profileURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("profile: pprof URL %q is not an http(s) URL", profileURL)
	}
	q := u.Query()
	q.Set("seconds", strconv.Itoa(o.Seconds))
	u.RawQuery = q.Encode()
	cl := o.Client
	if cl == nil {
		cl = &http.Client{Timeout: time.Duration(o.Seconds)*time.Second + 30*time.Second}
	}
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, "GET", u.String(), nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("profile: %w", err)
	}
	r := &PprofRecording{url: profileURL, o: o, start: time.Now(), done: make(chan struct{}), cancel: cancel}
	go r.fetch(cl, req)
	return r, nil
}

func (r *PprofRecording) fetch(cl *http.Client, req *http.Request) {
	defer close(r.done)
	resp, err := cl.Do(req)
	if err != nil {
		r.err = fmt.Errorf("profile: reading %s (does the target serve net/http/pprof?): %w", r.url, err)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, r.o.MaxBytes+1))
	switch {
	case err != nil:
		r.err = fmt.Errorf("profile: reading %s: %w", r.url, err)
	case resp.StatusCode != http.StatusOK:
		r.err = fmt.Errorf("profile: %s answered %s: %s", r.url, resp.Status, clip(strings.TrimSpace(string(body))))
	case int64(len(body)) > r.o.MaxBytes:
		r.err = fmt.Errorf("profile: %s sent more than %s", r.url, bytesize.Format(r.o.MaxBytes))
	default:
		r.body = body
	}
}

// Stop waits for the target's profile (it ends Seconds after it started,
// whenever Stop is called) and folds it. A window that ended well before
// or after the profile did is said in a warning.
func (r *PprofRecording) Stop() (*Profile, error) {
	window := time.Since(r.start)
	<-r.done
	r.cancel()
	if r.err != nil {
		return nil, r.err
	}
	pp, err := pprof.ParseData(r.body)
	if err != nil {
		return nil, fmt.Errorf("profile: %s: %w", r.url, err)
	}
	p, err := FromPprof(pp)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, r.url)
	}
	if d := time.Duration(r.o.Seconds)*time.Second - window; d > time.Second/2 || d < -time.Second/2 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("the target profiled itself for %d s, the window lasted %.1f s: pprof counts whole seconds", r.o.Seconds, window.Seconds()))
	}
	return p, nil
}

// FromPprof folds a Go CPU profile: its samples' CPU time ("cpu",
// nanoseconds), frames root first, inlined calls as frames of their own.
func FromPprof(pp *pprof.Profile) (*Profile, error) {
	cpu, count := -1, -1
	for i, st := range pp.SampleType {
		switch {
		case st.Type == "cpu" && st.Unit == "nanoseconds":
			cpu = i
		case st.Type == "samples":
			count = i
		}
	}
	if cpu < 0 {
		return nil, fmt.Errorf("profile: not a CPU profile (sample types %v)", sampleTypes(pp))
	}
	f := newFolder()
	for _, s := range pp.Sample {
		var leafFirst []string
		var named int
		for _, loc := range s.Location {
			if len(loc.Line) == 0 {
				leafFirst = append(leafFirst, unknownFrame(mappingFile(loc)))
				continue
			}
			for _, ln := range loc.Line {
				if ln.Function == nil || ln.Function.Name == "" {
					leafFirst = append(leafFirst, unknownFrame(mappingFile(loc)))
					continue
				}
				leafFirst = append(leafFirst, strings.ReplaceAll(ln.Function.Name, ";", ":"))
				named++
			}
		}
		if len(leafFirst) == 0 {
			leafFirst = []string{"[unknown]"}
		}
		n := int64(1)
		if count >= 0 {
			n = s.Value[count]
		}
		root := slices.Clone(leafFirst)
		slices.Reverse(root)
		f.add(root, n, s.Value[cpu])
		f.frames += int64(len(leafFirst)) * n
		f.resolved += int64(named) * n
		if len(s.Location) > 0 && len(s.Location[0].Line) > 0 {
			f.leaves += n
		}
	}
	p := f.profile()
	p.Source, p.Event, p.PeriodNs = "pprof", "cpu", pp.Period
	p.Window = time.Duration(pp.DurationNanos)
	p.Warnings = append(p.Warnings, "no kernel frames: a Go target's own profiler puts its time in the kernel on the Go frame that entered it")
	return p, nil
}

func mappingFile(loc *pprof.Location) string {
	if loc.Mapping == nil || loc.Mapping.File == "" {
		return ""
	}
	return filepath.Base(loc.Mapping.File)
}

func sampleTypes(pp *pprof.Profile) []string {
	var out []string
	for _, st := range pp.SampleType {
		out = append(out, st.Type+"/"+st.Unit)
	}
	return out
}
