package runtime

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/limits"
)

// CommandInputs are the files a command line depends on, with their hashes,
// for a builtin that starts it (workload.exec, backend.process): a replaced
// binary or an edited script makes the cell stale. The rule:
//
//   - the program (argv[0], found on PATH or relative to dir) is a "binary"
//     input, hashed whole; named without a slash, it is also a "program"
//     input, the path PATH finds (re-checked: another PATH, another program);
//   - every other argument that names an existing regular file, relative
//     to dir (where the command starts; "" is benchbook's working
//     directory) or absolute, is a "file" input: bench.py in
//     ["python3", "bench.py"], ./script.sh in "/bin/sh ./script.sh", the
//     value of --config=x.yaml. Up to limits.File (16 MiB) it is hashed;
//     past it, its size and modification time stand for it ("file-stat");
//   - a string command (argv = /bin/sh -c TEXT) is split into words, and the
//     words without shell syntax count as above;
//   - not inputs: paths under /proc, /sys and /dev (their content is made as
//     they are read), anything in a benchbook cache (.benchbook: a cluster's
//     data, snapshots), and arguments that name no existing file (an output
//     the command creates).
//
// A command that writes a file it names is measured against what it left:
// callers hash after the command ran where they can (workload.exec); a
// server's files are hashed when it starts.
func CommandInputs(t *starlark.Thread, argv []string, dir string) []Input {
	if len(argv) == 0 {
		return nil
	}
	if dir == "" {
		dir, _ = os.Getwd()
	}
	words := argv
	shell := len(argv) == 3 && (argv[0] == "/bin/sh" || argv[0] == "sh") && argv[1] == "-c"
	if shell {
		words = append([]string{argv[0]}, shellWords(argv[2])...)
	}
	out := programInputs(words[0], dir)
	if shell && len(words) > 1 {
		// sh -c "./bench --n 3": the first word is a program too
		if in := programInputs(words[1], dir); len(in) > 0 {
			out = append(out, in...)
			words = words[1:]
		}
	}
	seen := map[string]bool{}
	for _, w := range words[1:] {
		for _, p := range argPaths(w) {
			if in, ok := fileArgInput(t, p, dir); ok && !seen[in.Name] {
				seen[in.Name] = true
				out = append(out, in)
			}
		}
	}
	return out
}

// shellWords splits a shell command at blanks into the words that hold no
// shell syntax (a word with a quote, a variable or a redirection is left
// out: what it names is the shell's to decide).
func shellWords(cmd string) []string {
	var out []string
	for _, f := range strings.Fields(cmd) {
		if !strings.ContainsAny(f, "$`|&;<>(){}*?[]'\"\\") {
			out = append(out, f)
		}
	}
	return out
}

// argPaths are the paths an argument may name: itself, and the value of an
// option written --name=value.
func argPaths(arg string) []string {
	out := []string{arg}
	if strings.HasPrefix(arg, "-") {
		if _, v, ok := strings.Cut(arg, "="); ok && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// programInputs hashes the program a command starts, found as exec finds
// it: a "binary" input, its file. A name without a slash is also a
// "program" input, the path PATH gives it: with a relbench in two
// directories, switching PATH from one to the other runs another program,
// while the file the cell ran has not changed.
func programInputs(name, dir string) []Input {
	path := name
	var out []Input
	if !strings.Contains(name, "/") {
		p, err := lookPath(name)
		if err != nil {
			return nil // a shell builtin or keyword
		}
		path = p
		out = append(out, Input{Kind: "program", Name: name, Hash: path})
	} else if !filepath.IsAbs(name) {
		path = filepath.Join(dir, name)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	hash, err := FileSHA256(path)
	if err != nil {
		return nil
	}
	return append(out, Input{Kind: "binary", Name: path, Hash: hash})
}

// lookPath is where PATH finds a program, as an absolute path.
func lookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// programPath re-checks a "program" input: the path PATH gives the name
// now, "missing" when it finds none.
func programPath(name string) (string, error) {
	p, err := lookPath(name)
	if err != nil {
		return "missing", nil
	}
	return p, nil
}

// fileArgInput makes an argument that names an existing regular file an
// input, unless it is no file a notebook keeps (see CommandInputs).
func fileArgInput(t *starlark.Thread, arg, dir string) (Input, bool) {
	if arg == "" || strings.ContainsRune(arg, 0) {
		return Input{}, false
	}
	path := arg
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	path = filepath.Clean(path)
	if notInput(t, path) {
		return Input{}, false
	}
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return Input{}, false
	}
	if real, err := filepath.EvalSymlinks(path); err == nil && notInput(t, real) {
		return Input{}, false
	}
	if st.Size() > limits.File.Get() {
		return Input{Kind: "file-stat", Name: path, Hash: statIdentity(st)}, true
	}
	hash, err := fileHash(path)
	if err != nil {
		return Input{}, false
	}
	return Input{Kind: "file", Name: path, Hash: hash}, true
}

// notInput: a pseudo-file system, or a benchbook cache.
func notInput(t *starlark.Thread, path string) bool {
	for _, root := range []string{"/proc", "/sys", "/dev"} {
		if path == root || strings.HasPrefix(path, root+"/") {
			return true
		}
	}
	return inCache(t, path)
}

// inCache: path lies in the session's cache dir or any .benchbook dir
// (symlinks followed).
func inCache(t *starlark.Thread, path string) bool {
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path && inCache(t, real) {
		return true
	}
	if c := session(t).CacheDir; c != "" {
		if abs, err := filepath.Abs(c); err == nil && (path == abs || strings.HasPrefix(path, abs+"/")) {
			return true
		}
	}
	return strings.Contains(path, "/.benchbook/")
}

// statIdentity stands for a file too large to hash on every lookup: its
// size and modification time (an edit changes one or the other).
func statIdentity(st os.FileInfo) string {
	id := fmt.Sprintf("size %d mtime %d", st.Size(), st.ModTime().UnixNano())
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		id += fmt.Sprintf(" ino %d", sys.Ino)
	}
	return id
}

// fileStat re-checks a "file-stat" input.
func fileStat(path string) (string, error) {
	st, err := os.Stat(path)
	if os.IsNotExist(err) {
		return "missing", nil
	}
	if err != nil {
		return "", err
	}
	return statIdentity(st), nil
}
