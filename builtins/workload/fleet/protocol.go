package fleet

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchbook/benchbook/builtins/internal/guard"
)

// Version is the protocol version; an agent of another version refuses.
const Version = 1

// SeqRange is how many request sequence numbers each agent owns: agent i
// numbers its requests from i*SeqRange, so per-request generators stay
// deterministic and no two agents send the same request number.
const SeqRange = int64(1) << 40

// Spec is one agent's share of a fleet run: the first message it reads.
type Spec struct {
	Version int             `json:"version"`
	Kind    string          `json:"kind"`     // "http" or "sql": which generator Load is for
	Load    json.RawMessage `json:"load"`     // the generator's own spec, with this agent's share
	Agent   int             `json:"agent"`    // index in the fleet, from 0
	Agents  int             `json:"agents"`   // size of the fleet
	SeqBase int64           `json:"seq_base"` // first request sequence number (Agent*SeqRange)
	// Silence is how long the agent waits without hearing from the
	// coordinator before it stops: a remote agent whose coordinator vanished
	// (killed, partitioned) must not go on loading the target. 0: forever.
	Silence int64 `json:"silence_ns,omitempty"`
}

// Result is what one agent measured, its last message.
type Result struct {
	Host      string           `json:"host"`
	Count     int64            `json:"count"`    // successful requests in the measurement window
	Intended  int64            `json:"intended"` // requests due (open loop) or started (closed)
	Errors    map[string]int64 `json:"errors"`   // by class
	Late      int64            `json:"late"`
	Tick      int64            `json:"tick_ns,omitempty"` // open loop: the tick the agent sent on (loadgen.AutoTick)
	Dropped   int64            `json:"dropped"`
	Undecided int64            `json:"undecided"`
	Duration  float64          `json:"duration"` // s of measurement
	Hist      string           `json:"hist"`     // every decided request, µs; base64 HDR V2 compressed
	OK        string           `json:"ok_hist,omitempty"`
	Service   string           `json:"service,omitempty"`
	Windows   []Window         `json:"windows"`
	// MeasureStart is when the measurement window opened, Unix ns on the
	// agent's clock; with the clock offset it places the windows on the
	// coordinator's time line.
	MeasureStart int64    `json:"measure_start"`
	CPU          float64  `json:"cpu_s"` // user+sys CPU of the whole agent process during measurement
	Procs        int      `json:"procs"` // CPUs the agent could use (GOMAXPROCS)
	GenCPU       float64  `json:"gen_cpu_us_per_req"`
	Interrupted  bool     `json:"interrupted"`
	Warnings     []string `json:"warnings,omitempty"`
	// ClockOffset is the agent's clock minus the coordinator's, ns, as the
	// coordinator estimated it (echoed back so the result is whole alone).
	ClockOffset int64 `json:"clock_offset_ns"`
	// ClockMeasured: the offset was estimated. A pod that took its start
	// instant from its arguments trusts the cluster's clocks, unmeasured.
	ClockMeasured bool `json:"clock_measured"`
	// LateStart is how long after the agreed instant the load began, ns.
	LateStart int64 `json:"late_start_ns"`
	// Trips are the run guards that tripped on the agent's side (its box:
	// disk, memory pressure, swap).
	Trips []guard.Trip `json:"trips,omitempty"`
}

// Window is one measurement window of one agent.
type Window struct {
	Hist   string           `json:"hist"` // base64 HDR V2 compressed, µs
	OK     int64            `json:"ok"`
	Errors map[string]int64 `json:"errors,omitempty"`
}

// Message is one line of the protocol, in either direction.
//
// coordinator → agent: spec, clock (T0), start (At, Offset), ping.
// agent → coordinator: hello (Host, Version), clock (T0, T1, T2), ready,
// progress (Line), ping, result, error.
// Closing the agent's stdin stops it: it reports what it measured and exits.
type Message struct {
	Type    string  `json:"type"`
	Version int     `json:"version,omitempty"`
	Host    string  `json:"host,omitempty"`
	Spec    *Spec   `json:"spec,omitempty"`
	T0      int64   `json:"t0,omitempty"` // coordinator's send time, Unix ns
	T1      int64   `json:"t1,omitempty"` // agent's receive time
	T2      int64   `json:"t2,omitempty"` // agent's send time
	At      int64   `json:"at,omitempty"` // start instant, Unix ns on the agent's clock
	Offset  int64   `json:"offset,omitempty"`
	Line    string  `json:"line,omitempty"`
	Result  *Result `json:"result,omitempty"`
	Error   string  `json:"error,omitempty"`
}

// maxLine bounds one protocol line: a result with many windows' histograms
// is tens of KB; 64 MB keeps a corrupt stream from taking the memory.
const maxLine = 64 << 20

// lineWriter writes messages as JSON lines; safe for concurrent use.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) send(m Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err = l.w.Write(append(b, '\n'))
	return err
}

// lineReader reads messages; lines that are not JSON messages (a shell's
// banner, a stray print) are returned as type "noise" so they can be shown.
type lineReader struct{ s *bufio.Scanner }

func newLineReader(r io.Reader) *lineReader {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), maxLine)
	return &lineReader{s: s}
}

func (l *lineReader) next() (Message, error) {
	if !l.s.Scan() {
		if err := l.s.Err(); err != nil {
			return Message{}, err
		}
		return Message{}, io.EOF
	}
	var m Message
	if err := json.Unmarshal(l.s.Bytes(), &m); err != nil || m.Type == "" {
		return Message{Type: "noise", Line: string(l.s.Bytes())}, nil
	}
	return m, nil
}

// EncodeHist is a histogram in HdrHistogram's V2 compressed encoding;
// hdrhistogram-go already gives it as base64, the form HdrHistogram logs use.
func EncodeHist(h *hdrhistogram.Histogram) (string, error) {
	if h == nil {
		return "", nil
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHist reverses EncodeHist; "" is nil.
func DecodeHist(s string) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return nil, nil
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}
