package sqlite

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/resstate"
)

// A SQLite file is the user's: between two runs another program may write
// it, or another file be put in its place (3 rows replaced by 9). Its
// cells' first state is the file as benchbook first found it, and
// benchbook notes the file as it leaves it (seenFile) after every change
// of state and when the session ends. A file found otherwise, while no
// cell of benchbook was changing it, changed outside benchbook: its
// content is a new first state, an input of the cell that opens it
// (originKind, re-checked on lookup), so the cells that use it run again
// from it, as on an empty cache. The file put back as it was finds the old
// first state's entries and snapshots again.

// originKind is the input kind of a file's first state; its name is the
// resource dir, whose seenFile names the file.
const originKind = "sqlite-file"

// seenFile holds the file as benchbook last left it.
const seenFile = "seen"

type seenNote struct {
	Path   string `json:"path"`
	Stat   string `json:"stat"`   // size, times, inode: unchanged, not read again
	SHA256 string `json:"sha256"` // the content, "absent" for no file
}

// origin is the first state of the cells of the file at path, whose
// resource dir is dir: the one recorded there, unless none is or the file
// changed outside benchbook since; then the file as it is now, and fresh
// says so: the data is in that state (the original put back over what
// the cells left is the first state again, not the state they left).
func origin(dir, path string) (initial string, fresh bool, err error) {
	initial = readInitial(dir)
	if initial == "" || changedOutside(dir, path) {
		initial, err = fileState(path)
		return initial, true, err
	}
	return initial, false, nil
}

// checkOrigin re-checks an originKind input.
func checkOrigin(dir string) (string, error) {
	s, ok := readSeen(dir)
	if !ok {
		if initial := readInitial(dir); initial != "" {
			return initial, nil
		}
		return "missing", nil
	}
	initial, _, err := origin(dir, s.Path)
	return initial, err
}

// changedOutside reports whether the file is not what benchbook last left.
func changedOutside(dir, path string) bool {
	s, ok := readSeen(dir)
	if !ok || s.Path != path {
		return false // never noted (an older cache): nothing to compare with
	}
	if resstate.Unsettled(dir) {
		return false // a run killed while a cell wrote it: its own leftovers, restored before use
	}
	if st, err := statOf(path); err == nil && st == s.Stat {
		return false
	}
	sum, err := content(path)
	return err != nil || sum != s.SHA256
}

func readSeen(dir string) (seenNote, bool) {
	var s seenNote
	data, err := os.ReadFile(filepath.Join(dir, seenFile))
	if err != nil || json.Unmarshal(data, &s) != nil || s.Path == "" {
		return seenNote{}, false
	}
	return s, true
}

// noteSeen records the file as benchbook leaves it now; an unchanged
// identity is not hashed again.
func (h *Handle) noteSeen() {
	if h.id == "" {
		return
	}
	st, err := statOf(h.path)
	h.mu.Lock()
	same := err == nil && st == h.seen
	h.mu.Unlock()
	if same {
		return
	}
	sum, err := content(h.path)
	if err != nil {
		return
	}
	data, _ := json.Marshal(seenNote{Path: h.path, Stat: st, SHA256: sum})
	if kit.WriteOwn(filepath.Join(h.id, seenFile), data) == nil {
		h.mu.Lock()
		h.seen = st
		h.mu.Unlock()
	}
}

// statOf names the file's identity: size, modification and change times,
// inode ("absent" for no file). cp -p keeps the modification time, not the
// change time.
func statOf(path string) (string, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return "absent", nil
	}
	if err != nil {
		return "", err
	}
	id := fmt.Sprintf("size %d mtime %d", fi.Size(), fi.ModTime().UnixNano())
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		id += fmt.Sprintf(" ctime %d ino %d", sys.Ctim.Nano(), sys.Ino)
	}
	return id, nil
}

// content is the file's SHA-256, "absent" for no file.
func content(path string) (string, error) {
	sum, err := runtime.FileSHA256(path)
	if errors.Is(err, os.ErrNotExist) {
		return "absent", nil
	}
	return sum, err
}
