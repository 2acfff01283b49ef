package runtime

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IsTerminal says whether w is a terminal, seen through the redacting
// writer Stderr returns: a progress line may then be rewritten in place,
// and colours shown. A writer that is not a file but shows "\r"-rewritten
// lines in place (the Jupyter kernel's, which turns them into display
// updates) says so with a RewritesLines method.
func IsTerminal(w io.Writer) bool {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		w = u.Unwrap()
	}
	if r, ok := w.(interface{ RewritesLines() bool }); ok {
		return r.RewritesLines()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(int(f.Fd())) // a terminal answers its ioctl; /dev/null, a character device, does not
}
