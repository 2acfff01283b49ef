package repl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/ipynb"
	"github.com/benchbook/benchbook/runtime/jupyter"
	"github.com/benchbook/benchbook/runtime/limits"
	"github.com/benchbook/benchbook/runtime/procfs"
)

// unnamedKernel is the cache name of a notebook the kernel cannot name:
// .benchbook/kernel, or kernel-2, kernel-3 ... when another kernel holds it.
const unnamedKernel = "kernel"

// maxUnnamed bounds the caches an unnamed kernel tries before it waits.
const maxUnnamed = 64

// settle makes the notebook's own engine the session's, at the first cell a
// kernel not told its notebook is sent (nbconvert, nbclient and the classic
// Notebook set no JPY_SESSION_NAME). The notebook is the .ipynb in the
// working directory that holds this cell (Jupyter starts a kernel in its
// notebook's directory), by the name its metadata.benchbook.notebook gives
// (benchbook convert writes it) or its file name: so nbconvert, then
// "benchbook run NAME.star", share one cache. A cell no file holds is an
// unnamed notebook's, cached in .benchbook/kernel, or the first kernel-N no
// other kernel holds: two notebooks never share a cache, and a kernel never
// waits for another notebook's. A named notebook's cache held by another
// process is waited for, as benchbook run waits, and the wait is shown; an
// interrupt ends it, and the kernel stays provisional until the next cell.
func (ks *kernelSession) settle(ctx context.Context, code string) *jupyter.Error {
	name, how := identifyNotebook(ks.dir, code, parentCommand())
	tries := []string{name}
	if name == "" {
		tries = []string{unnamedKernel}
		for i := 2; i <= maxUnnamed; i++ {
			tries = append(tries, unnamedKernel+"-"+strconv.Itoa(i))
		}
	}
	for i, n := range tries {
		path := filepath.Join(ks.dir, n+".ipynb")
		cacheDir := ks.opts.Engine.CacheDir // -cache-dir: the user's choice, shared or not
		noWait := name == "" && cacheDir == "" && i < len(tries)-1
		r, err := ks.openRepl(ctx, path, cacheDir, noWait)
		if errors.Is(err, runtime.ErrLocked) {
			continue
		}
		if err != nil {
			return ks.failure(err, "")
		}
		ks.r.e.Close()
		ks.dropProvisional()
		ks.r, ks.named, ks.nb.path = r, true, path
		fmt.Fprintf(ks.log, "kernel: notebook %s (%s), cache %s\n", n, how, r.e.CacheDir())
		return nil
	}
	return nil // not reached: the last try waits
}

// identifyNotebook names the notebook whose cell code is: the .ipynb files
// of dir holding a code cell with that source, by their recorded name
// (metadata.benchbook.notebook) or file name. Several files naming
// different notebooks (study.ipynb and the study.nbconvert.ipynb an
// earlier nbconvert wrote) are told apart by the frontend's command line
// (parent: "jupyter nbconvert --execute study.ipynb"). It returns "" when
// no file holds the cell or the files leave it ambiguous, and says how it
// decided.
func identifyNotebook(dir, code string, parent frontendCommand) (name, how string) {
	want := strings.TrimRight(code, " \t\r\n")
	if want == "" {
		return "", "an empty cell"
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.ipynb"))
	names := map[string]string{} // file -> notebook name
	for _, f := range files {
		src, err := limits.ReadFile(f, limits.File)
		if err != nil {
			continue
		}
		nb, err := ipynb.Unmarshal(src)
		if err != nil || !slices.ContainsFunc(nb.Cells, func(c ipynb.Cell) bool {
			return c.CellType == "code" && strings.TrimRight(string(c.Source), " \t\r\n") == want
		}) {
			continue
		}
		n := nb.Name()
		if n == "" {
			n = strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		}
		names[f] = n
	}
	distinct := map[string]bool{}
	for _, n := range names {
		distinct[n] = true
	}
	switch {
	case len(names) == 0:
		return "", "no .ipynb in " + dir + " holds its first cell"
	case len(distinct) == 1:
		for f, n := range names {
			return n, "its first cell is in " + filepath.Base(f)
		}
	}
	for f, n := range names {
		if parent.names(f) {
			return n, "its first cell is in " + filepath.Base(f) + ", which the frontend's command line names"
		}
	}
	held := make([]string, 0, len(names))
	for f := range names {
		held = append(held, filepath.Base(f))
	}
	slices.Sort(held)
	return "", "its first cell is in " + strings.Join(held, ", ")
}

// frontendCommand is the command line of the process that started the
// kernel, and its working directory.
type frontendCommand struct {
	args []string
	dir  string
}

// parentCommand reads the parent process's command line from /proc
// (nothing where there is none).
func parentCommand() frontendCommand {
	ppid := os.Getppid()
	args, err := procfs.Args(ppid)
	if err != nil {
		return frontendCommand{}
	}
	dir, _ := procfs.Cwd(ppid)
	return frontendCommand{args: args, dir: dir}
}

// names reports whether an argument of the command is the file path.
func (c frontendCommand) names(path string) bool {
	for _, a := range c.args[min(1, len(c.args)):] {
		if !strings.HasSuffix(a, ".ipynb") {
			continue
		}
		if !filepath.IsAbs(a) {
			a = filepath.Join(c.dir, a)
		}
		if filepath.Clean(a) == filepath.Clean(path) {
			return true
		}
	}
	return false
}
