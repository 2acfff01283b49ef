package runtime

import (
	"bytes"
	"io"
	"os"
	"testing"
)

type unwrapper struct{ w io.Writer }

func (u unwrapper) Write(p []byte) (int, error) { return u.w.Write(p) }
func (u unwrapper) Unwrap() io.Writer           { return u.w }

// A pipe or a buffer is no terminal; a character device is one, also seen
// through a wrapper that unwraps (the redacting writer).
func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for _, c := range []struct {
		name string
		w    io.Writer
		want bool
	}{{"pipe", w, false}, {"buffer", &bytes.Buffer{}, false}, {"wrapped pipe", unwrapper{w}, false},
		{"char device", null, true}, {"wrapped char device", unwrapper{null}, true}} {
		if got := IsTerminal(c.w); got != c.want {
			t.Errorf("IsTerminal(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}
