package runtime

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/codec"
)

// A live cell's values are not stored, so they reach a dependent's key
// through the cell's key: edit one value of a live cell and every value of
// it moves in the key. A rerun's reason must still name only what changed
// (issue 33: editing limit listed day_of and index_sql as changed too), so
// each run remembers, per live value a cell read, an identity of its
// content, compared to say which of them did change. It explains; the key
// is unchanged.

// liveRead reports whether the value name, as cell c reads it, comes from a
// live cell (and so enters c's key by that cell's key).
func (e *Engine) liveRead(name string) (*CellRun, bool) {
	up := e.runs[e.g.definer[name]]
	if up == nil {
		return nil, false
	}
	return up, up.live()
}

// liveIdentities are the identities of the live values cell c read in
// this run, from the values where this process holds them, else from the
// live cell's entry.
func (e *Engine) liveIdentities(c *CellDef) map[string]string {
	out := map[string]string{}
	for _, name := range c.Reads {
		if up, live := e.liveRead(name); live {
			if id := e.liveIdentity(up, name); id != "" {
				out[name] = id
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (e *Engine) liveIdentity(up *CellRun, name string) string {
	if up.values != nil {
		return e.valueIdentity(up.values[name])
	}
	if up.entry != nil {
		return up.entry.Identities[name]
	}
	return ""
}

// identities are the identities of a live cell's values, for its entry.
func (e *Engine) identities(values starlark.StringDict) map[string]string {
	out := map[string]string{}
	for name, v := range values {
		if id := e.valueIdentity(v); id != "" {
			out[name] = id
		}
	}
	return out
}

// valueIdentity names a value's content: its encoding if it can be stored,
// a function's fingerprint (its text, free variables and the globals it
// names), a resource by its ID, else "" (unknown: a change is assumed).
// An HMAC under the cache's salt, as parameters are: state.json must give
// nothing to try a secret against.
func (e *Engine) valueIdentity(v starlark.Value) string {
	if v == nil {
		return ""
	}
	mac := hmac.New(sha256.New, e.sess.paramSalt)
	switch {
	case isStateHolder(v):
		fmt.Fprintf(mac, "resource:%s", v.(StateHolder).StateID())
	default:
		if data, err := codec.Encode(v); err == nil {
			fmt.Fprintf(mac, "value:%x", sha256.Sum256(data))
			break
		}
		th := e.sess.NewThread(&Cell{Name: "why"})
		fp, ok := e.fingerprint(th, v)
		if !ok {
			return ""
		}
		fmt.Fprintf(mac, "func:%s", fp)
	}
	return hex.EncodeToString(mac.Sum(nil))
}

func isStateHolder(v starlark.Value) bool { _, ok := v.(StateHolder); return ok }

// unchangedLive reports whether the live value name, whose key part moved,
// holds the content it held in the last run.
func (e *Engine) unchangedLive(c *CellDef, name string) bool {
	up, live := e.liveRead(name)
	if !live {
		return false
	}
	was := e.prev[c.Name].Live[name]
	return was != "" && was == e.liveIdentity(up, name)
}

// liveOnly explains a miss whose only moved parts are live values that
// held the same content: the cells that make them changed, and their
// values are keyed by the cell.
func liveOnly(cells map[string]bool, reader string) string {
	names := make([]string, 0, len(cells))
	for n := range cells {
		names = append(names, n)
	}
	sort.Strings(names)
	word := "cell"
	if len(names) > 1 {
		word = "cells"
	}
	return fmt.Sprintf("%s %s changed, but none of the values %s reads from it did (a live cell's values are keyed by the cell)",
		word, strings.Join(names, ", "), reader)
}
