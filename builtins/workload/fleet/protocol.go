package fleet

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// Version is the protocol version; an agent of another version refuses.
// 2: the result is a Report carrying loadgen.Result.
// 3: mixes (HTTPSpec.Requests, SQLLoad.Requests) and per-tag results.
const Version = 3

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

// Report is what one agent measured, its last message: its run, in
// loadgen's own shape and wire encoding, and what places it among the
// others (host, clock, start).
type Report struct {
	Run  *loadgen.Result `json:"run"`
	Host string          `json:"host"`
	// MeasureStart is when the measurement window opened, Unix ns on the
	// agent's clock; with the clock offset it places the windows on the
	// coordinator's time line.
	MeasureStart int64 `json:"measure_start"`
	Procs        int   `json:"procs"` // CPUs the agent could use (GOMAXPROCS)
	// ClockOffset is the agent's clock minus the coordinator's, ns, as the
	// coordinator estimated it (echoed back so the report is whole alone).
	ClockOffset int64 `json:"clock_offset_ns"`
	// ClockMeasured: the offset was estimated. A pod that took its start
	// instant from its arguments trusts the cluster's clocks, unmeasured.
	ClockMeasured bool `json:"clock_measured"`
	// LateStart is how long after the agreed instant the load began, ns.
	LateStart int64 `json:"late_start_ns"`
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
	Result  *Report `json:"result,omitempty"`
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
