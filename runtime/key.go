package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// key computes a cell's cache key: the format version, its normalized
// source, for every name it reads the hash of that value (or, for a live
// value, the key of the cell that makes it), the parameters it names and the
// modules it loads. Hashing values rather than upstream keys means a rerun
// that produces the same values leaves downstream cells cached.
func (e *Engine) key(c *CellDef) string {
	parts := []string{"benchbook-key", strconv.Itoa(FormatVersion), c.srcHash}
	return hashString(append(parts, e.keyParts(c)...)...)
}

// keyParts lists the named ingredients of a key besides the source, as
// "kind name=value" strings; saved between runs to explain a miss.
func (e *Engine) keyParts(c *CellDef) []string {
	var parts []string
	for _, name := range c.Reads {
		h, _ := readID(e.runs[e.g.definer[name]], name)
		parts = append(parts, fmt.Sprintf("read %s=%s", name, h))
	}
	for _, p := range c.Params {
		parts = append(parts, fmt.Sprintf("param %s=%s", p, e.paramValue(p)))
	}
	for _, m := range c.Loads {
		h, err := e.sess.ModuleHash(m)
		if err != nil {
			h = "missing"
		}
		parts = append(parts, fmt.Sprintf("load %s=%s", m, h))
	}
	sort.Strings(parts)
	return parts
}

// readID names the value of global name as a cell that reads it from
// cell up sees it: its hash, or, for a live value, which is not hashed,
// the key of its cell with the inputs that cell met (a file its function
// closes over, the binary of the server it started). Keys and memo
// fingerprints (fingerprint.go) both name what they read with it. ok is
// false when up holds no hash for name.
func readID(up *CellRun, name string) (id string, ok bool) {
	if up.live() {
		id = "live:" + up.Key
		if len(up.inputs) > 0 {
			id += "/" + inputsHash(up.inputs)
		}
		return id, true
	}
	id, ok = up.hashes[name]
	return id, ok
}

// live reports whether the cell's values are live (not stored).
func (st *CellRun) live() bool { return st.Status == StatusLive || st.entry != nil && st.entry.Live }

// cellMemory is what a run remembers of a cell to explain the next miss.
type cellMemory struct {
	Key   string   `json:"key"`
	Src   string   `json:"src"`
	Parts []string `json:"parts"`
	// Live identifies the content of each live value the cell read, whose
	// key part moves with its cell's key (why.go).
	Live map[string]string `json:"live,omitempty"`
}

func (e *Engine) memoryPath() string { return filepath.Join(e.store.dir, "state.json") }

func (e *Engine) loadMemory() map[string]cellMemory {
	m := map[string]cellMemory{}
	if err := readChecked(e.memoryPath(), &m); err != nil {
		return map[string]cellMemory{}
	}
	return m
}

func (e *Engine) saveMemory() {
	m := map[string]cellMemory{}
	for c, st := range e.runs {
		if st.Key != "" {
			m[c.Name] = cellMemory{Key: st.Key, Src: c.srcHash, Parts: e.keyParts(c), Live: e.liveIdentities(c)}
		}
	}
	if err := writeChecked(e.memoryPath(), m); err != nil && !os.IsNotExist(err) {
		e.warn(fmt.Sprintf("state not saved: %v", err))
	}
}

// whyMiss explains a cache miss by comparing with the last run's key parts.
func (e *Engine) whyMiss(st *CellRun) string {
	prev, ok := e.prev[st.Def.Name]
	switch {
	case !ok:
		return "no entry in the cache"
	case prev.Src != st.Def.srcHash:
		return "source changed"
	}
	old := map[string]bool{}
	for _, p := range prev.Parts {
		old[p] = true
	}
	var changed []string
	sameLive := map[string]bool{} // cells whose live values moved in the key, not in content
	for _, p := range e.keyParts(st.Def) {
		if !old[p] {
			kind, rest, _ := strings.Cut(p, " ")
			name, _, _ := strings.Cut(rest, "=")
			switch {
			case kind == "read" && e.unchangedLive(st.Def, name):
				sameLive[e.g.definer[name].Name] = true
			case kind == "read":
				changed = append(changed, fmt.Sprintf("%s (from %s) changed", name, e.g.definer[name].Name))
			default:
				changed = append(changed, kind+" "+name+" changed")
			}
		}
	}
	if len(changed) == 0 && len(sameLive) > 0 {
		return liveOnly(sameLive, st.Def.Name)
	}
	if len(changed) == 0 {
		return "no entry in the cache"
	}
	return strings.Join(changed, ", ")
}
