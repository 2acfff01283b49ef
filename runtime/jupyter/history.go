package jupyter

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
)

// history keeps this session's inputs for history_request: tail, range and
// search, as IPython's history manager answers them (one session, numbered
// 1; session 0 or a negative one means this one too).
type history struct {
	mu      sync.Mutex
	entries []historyEntry
}

type historyEntry struct {
	line          int
	input, output string
}

const historySession = 1

func (h *history) add(line int, input, output string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entries = append(h.entries, historyEntry{line, input, output})
}

type historyRequest struct {
	Output  bool   `json:"output"`
	Raw     bool   `json:"raw"`
	Access  string `json:"hist_access_type"`
	Session int    `json:"session"`
	Start   int    `json:"start"`
	Stop    int    `json:"stop"`
	N       int    `json:"n"`
	Pattern string `json:"pattern"`
	Unique  bool   `json:"unique"`
}

func (k *Kernel) historyReply(m *Message) map[string]any {
	var req historyRequest
	_ = json.Unmarshal(m.Content, &req)
	return map[string]any{"status": "ok", "history": k.history.query(req)}
}

// query selects entries and shapes them as [session, line, input] or, with
// output, [session, line, [input, output]].
func (h *history) query(req historyRequest) []any {
	h.mu.Lock()
	all := append([]historyEntry(nil), h.entries...)
	h.mu.Unlock()
	var picked []historyEntry
	switch req.Access {
	case "tail":
		picked = last(all, req.N)
	case "range":
		if req.Session > 0 && req.Session != historySession {
			break
		}
		for _, e := range all {
			if e.line >= req.Start && (req.Stop <= 0 || e.line < req.Stop) {
				picked = append(picked, e)
			}
		}
	case "search":
		picked = search(all, req.Pattern, req.Unique)
		picked = last(picked, req.N)
	}
	out := make([]any, 0, len(picked))
	for _, e := range picked {
		if req.Output {
			out = append(out, []any{historySession, e.line, []any{e.input, e.output}})
		} else {
			out = append(out, []any{historySession, e.line, e.input})
		}
	}
	return out
}

func last(es []historyEntry, n int) []historyEntry {
	if n > 0 && len(es) > n {
		return es[len(es)-n:]
	}
	return es
}

// search matches inputs against a glob pattern (IPython's SQL GLOB: the
// whole input, "*" and "?" across newlines too); unique keeps the latest
// entry of each input.
func search(es []historyEntry, pattern string, unique bool) []historyEntry {
	if pattern == "" {
		pattern = "*"
	}
	re, err := regexp.Compile("(?s)^" + globToRegexp(pattern) + "$")
	if err != nil {
		return nil
	}
	var out []historyEntry
	seen := map[string]bool{}
	for i := len(es) - 1; i >= 0; i-- {
		e := es[i]
		if !re.MatchString(e.input) || unique && seen[e.input] {
			continue
		}
		seen[e.input] = true
		out = append(out, e)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func globToRegexp(g string) string {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			j := strings.IndexByte(g[i+1:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := g[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") || strings.HasPrefix(class, "^") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}
