// Package report is what benchbook's commands (run, cells, watch, the REPL
// and the kernel) say of a notebook: a cell's status as a plan knows it,
// the line that sums up a run, the cells an edit changed, and the record
// written to its file.
package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/record"
)

// CellStatus is a cell's status as a plan can know it: "unknown" for a
// cell whose status only the run of an upstream stale cell decides (it may
// leave the same values, the same state), so that cells never calls stale
// what run then finds a hit.
func CellStatus(st *runtime.CellRun) string {
	if st.Status == runtime.StatusStale && st.Until != "" {
		return "unknown"
	}
	return string(st.Status)
}

// Join lists names with commas, "-" for none (cells' reads and defines).
func Join(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

// Summary is the line that ends a run: "5 cells: 3 hit, 2 ran".
func Summary(n map[runtime.Status]int) string {
	total := 0
	for _, k := range record.Statuses {
		total += n[k]
	}
	s := fmt.Sprintf("%d cells:", total)
	sep := " "
	for _, k := range record.Statuses {
		if n[k] > 0 {
			s += fmt.Sprintf("%s%d %s", sep, n[k], k)
			sep = ", "
		}
	}
	return s
}

// WriteRecord writes the record atomically in the given format, making
// the folder it goes in when it does not exist (-o records/today/nb.html).
func WriteRecord(r *record.Record, dest, format string) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return 0, fmt.Errorf("record: %w", err)
	}
	n, err := writeFile(r, dest, format)
	if errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS) {
		err = fmt.Errorf("%w (%s is not writable here: write the record elsewhere with -o PATH, or :render PATH in the REPL; finished cells are cached)", err, filepath.Dir(dest))
	}
	return n, err
}

func writeFile(r *record.Record, dest, format string) (int64, error) {
	if format == "md" {
		if err := record.Markdown(r, dest); err != nil {
			return 0, err
		}
		st, err := os.Stat(dest)
		if err != nil {
			return 0, err
		}
		return st.Size(), nil
	}
	var buf bytes.Buffer
	var err error
	if format == "json" {
		err = record.JSON(&buf, r)
	} else {
		err = record.HTML(&buf, r)
	}
	if err != nil {
		return 0, fmt.Errorf("record: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), ".record-*")
	if err != nil {
		return 0, fmt.Errorf("record: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return 0, fmt.Errorf("record: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return 0, fmt.Errorf("record: %w", err)
	}
	os.Chmod(tmp.Name(), 0o644)
	return int64(buf.Len()), os.Rename(tmp.Name(), dest)
}

// Edit says which cells the user edited, added or removed. Cells
// whose key changed only because an upstream cell did show in the "ran:"
// line instead.
func Edit(ed runtime.Edit) string {
	desc := "edited: " + OrNone(ed.Edited)
	if len(ed.Added) > 0 {
		desc += "; added: " + strings.Join(ed.Added, ", ")
	}
	if len(ed.Removed) > 0 {
		desc += "; removed: " + strings.Join(ed.Removed, ", ")
	}
	return desc
}

// OrNone lists names with commas, "(none)" for none.
func OrNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}

// RecordPath is the record's path: beside the notebook, with ext.
func RecordPath(nbPath, out, ext string) string {
	if out != "" {
		return out
	}
	return strings.TrimSuffix(nbPath, filepath.Ext(nbPath)) + ext
}

// UseColor: a terminal on stderr and no NO_COLOR.
func UseColor(noColor bool, w io.Writer) bool {
	return !noColor && os.Getenv("NO_COLOR") == "" && runtime.IsTerminal(w)
}
