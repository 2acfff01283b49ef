package export

import (
	"bytes"
	"encoding/csv"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/redact"
)

var _ redact.Redacter = (*File)(nil)

// Redacted hides the secrets of an export, name and content, on its way to
// a record or the cache: a CSV column whose header says secret is masked
// whole, any other text as text.
func (f *File) Redacted() (starlark.Value, bool) {
	text := redact.String(f.Text)
	if f.MIME == "text/csv" {
		if t, changed, ok := redactCSV(f.Text); ok && changed {
			text = t
		}
	}
	name := redact.String(f.Name)
	if name == f.Name && text == f.Text {
		return f, false
	}
	return &File{Name: name, MIME: f.MIME, Text: text}, true
}

// redactCSV masks the columns whose header says secret and hides secrets
// in other cells; ok is false when the text is not CSV (it is then
// redacted as plain text).
func redactCSV(text string) (out string, changed, ok bool) {
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil || len(recs) == 0 {
		return "", false, false
	}
	header := recs[0]
	for i, rec := range recs {
		for j, cell := range rec {
			red := redact.String(cell)
			if i > 0 && j < len(header) && redact.SecretName(header[j]) && cell != "" {
				redact.LearnValue(cell)
				red = redact.Mask
			}
			changed = changed || red != cell
			rec[j] = red
		}
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.WriteAll(recs)
	return buf.String(), changed, w.Error() == nil
}
