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

// A pipe, a buffer or /dev/null (a character device, but no terminal) is
// no terminal, also seen through a wrapper that unwraps (the redacting
// writer).
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
		{"/dev/null", null, false}, {"wrapped /dev/null", unwrapper{null}, false}} {
		if got := IsTerminal(c.w); got != c.want {
			t.Errorf("IsTerminal(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}
