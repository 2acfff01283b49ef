// Package hardstop ends benchbook when a signal's end of the work does not
// come in time.
package hardstop

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// exitGrace is how long run and watch have, after SIGINT or SIGTERM, to
// stop and write what they have before the process exits anyway.
// Cancellation reaches a Starlark loop and every builtin that blocks, but
// not Go work already under way: Starlark formatting a value nested
// 200,000 deep ("%s" % x, 34 s), goldmark rendering pathological
// Markdown, hiding secrets in 64 MB of printed text (an endless print loop
// ended 122 s after SIGTERM). Finished cells are in the cache already
// (each entry is written whole, by rename, the moment its cell ends), and
// the supervisor kills the children when the process dies.
const exitGrace = 1500 * time.Millisecond

// Watch exits with 130 when ctx has been done for exitGrace and the
// command has not returned: the commands that run cells (run, watch)
// answer a signal within exitGrace whatever they are doing. The kernel and
// the REPL take SIGINT as an interrupt of one input and handle signals
// themselves; tests call run with a context no signal ends.
func Watch(ctx context.Context, stderr io.Writer) {
	<-ctx.Done()
	ExitAfterGrace(stderr, "interrupted; still busy %v after the signal, so stopped without writing the record; finished cells are cached, rerun to resume")
}

// ExitAfterGrace exits with 130 after exitGrace, saying why (msg takes
// exitGrace): the REPL and the kernel call it on SIGTERM, whose end of the
// session waits for the running input, which may be Go work nothing
// cancels ("%s" % x of a list nested 200,000 deep kept the REPL 48 s).
func ExitAfterGrace(stderr io.Writer, msg string) {
	time.Sleep(exitGrace)
	fmt.Fprintf(stderr, "benchbook: "+msg+"\n", exitGrace)
	os.Exit(130)
}
