package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchbook/benchbook/runtime/resstate"
)

// CleanResult says what Clean removed.
type CleanResult struct {
	Entries, Memos, Resources int
	Temps                     int // files of killed runs, removed when the cache opened
	Bytes                     int64
}

// Clean removes cache entries, memo checkpoints and resources (cluster data,
// process files) that no cell of the notebook references any more. Call it
// after Run(false) so every cell's current key is known.
func (e *Engine) Clean() (CleanResult, error) {
	res := CleanResult{Temps: e.temps, Bytes: e.tempBytes}
	keys := map[string]bool{}
	owners := map[string]bool{"bin": true} // built binaries, shared by revision
	for c, st := range e.runs {
		if st.Key != "" {
			keys[st.Key] = true
			owners[c.Name+"-"+st.Key[:16]] = true
			keys[memoNamespace(c.Name)] = true
		}
	}
	var err error
	res.Entries, res.Bytes, err = removeUnlisted(filepath.Join(e.store.dir, "entries"), 2, keys, res.Bytes)
	if err != nil {
		return res, err
	}
	res.Memos, res.Bytes, err = removeUnlisted(filepath.Join(e.store.dir, "memo"), 2, keys, res.Bytes)
	if err != nil {
		return res, err
	}
	res.Resources, res.Bytes, err = removeUnlisted(filepath.Join(e.opts.CacheDir, "resources"), 1, owners, res.Bytes)
	return res, err
}

// removeUnlisted removes the entries at the given depth below dir whose
// names are not in keep.
func removeUnlisted(dir string, depth int, keep map[string]bool, bytes int64) (int, int64, error) {
	pattern := dir
	for range depth {
		pattern = filepath.Join(pattern, "*")
	}
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return 0, bytes, err
	}
	n := 0
	for _, m := range matches {
		name, _, _ := strings.Cut(filepath.Base(m), variantSep)
		if keep[name] {
			continue
		}
		bytes += resstate.UniqueUsage(m) // snapshots share files: each counts once
		if err := os.RemoveAll(m); err != nil {
			return n, bytes, fmt.Errorf("clean: %w", err)
		}
		n++
	}
	return n, bytes, nil
}
