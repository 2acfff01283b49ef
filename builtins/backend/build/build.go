// Package build builds a Go main package at a git revision: build(pkg, rev).
//
// The binary is cached under the cache dir by repository, revision,
// package and what the build was given (cgo, tags, ldflags, env) together
// with the Go toolchain's own settings that shape the binary (its version,
// CGO_ENABLED, GOOS, GOARCH, GOFLAGS, ...); a cell run with -rerun builds
// it again. A "git" input makes the cell stale at a new revision (or, for
// the working tree, any edit), a "binary" input when the file changed.
// backend.process and backend.container take the value it returns (a
// static one, cgo = False, runs in an image of its own:
// backend.container(b)).
package build

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/child"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
)

// Kind is build(pkg, rev=None, repo=".", cgo=None, tags=[], ldflags="",
// env={}): a Go main package built at a git revision in a temporary
// worktree (rev=None: the working tree as it is), a top-level builtin of
// the backend module's root. cgo = False builds with CGO_ENABLED=0, a
// static binary an empty image can run (None: Go's default); tags are
// build tags, ldflags go build's -ldflags ("-X main.version=v2"), env more
// variables for go build (GOAMD64, GOEXPERIMENT, ...).
var Kind = handle.Kind{
	Name:     "build",
	Builtin:  starlark.NewBuiltin("build", buildBuiltin),
	TopLevel: true,
	Codecs:   map[string]codec.DecodeFunc{"binary": decodeBinary},
	Inputs:   map[string]runtime.InputChecker{"git": gitInputHash, "binary": binaryHash},
}

// binary is what build returns: a file to hand to backend.process.
type binary struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Rev    string `json:"rev"` // the commit built
	Dirty  bool   `json:"dirty"`
	Pkg    string `json:"pkg"`
	// Settings are what shaped the build besides the source: the
	// toolchain's version and variables, the tags and ldflags given
	// ("go1.26.0 CGO_ENABLED=0 GOARCH=amd64 ... -tags fast").
	Settings string `json:"settings,omitempty"`
	// Interpreter is the dynamic loader the binary needs, "" when static.
	Interpreter string `json:"interpreter,omitempty"`
}

// binaryHash is the checker of "binary" inputs: the file's hash now.
func binaryHash(path string) (string, error) {
	sum, err := runtime.FileSHA256(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil // removed (benchbook clean): stale, build again
	}
	return sum, err
}

func decodeBinary(data []byte, _ codec.Types) (starlark.Value, error) {
	b := &binary{}
	if err := json.Unmarshal(data, b); err != nil {
		return nil, err
	}
	return &Binary{*b}, nil
}

func buildBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var pkg, rev, ldflags string
	repo := "."
	var revV, cgo, tags starlark.Value = starlark.None, starlark.None, starlark.None
	var env *starlark.Dict
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pkg", &pkg, "rev?", &revV, "repo?", &repo,
		"cgo?", &cgo, "tags?", &tags, "ldflags?", &ldflags, "env?", &env); err != nil {
		return nil, err
	}
	if s, ok := starlark.AsString(revV); ok {
		rev = s
	} else if revV != starlark.None {
		return nil, fmt.Errorf("%s: rev must be a string or None, got %s", b.Name(), revV.Type())
	}
	opts, err := buildOptions(cgo, tags, ldflags, env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	repo, err = gitTop(runtime.Context(th), runtime.Path(th, repo))
	if err != nil {
		return nil, fmt.Errorf("%s: repo: %w", b.Name(), err)
	}
	out, err := buildAt(th, buildSpec{pkg: pkg, rev: rev, repo: repo, options: opts})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	hash, err := gitInputHash(repo + "@" + rev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	runtime.AddInput(th, runtime.Input{Kind: "git", Name: repo + "@" + rev, Hash: hash})
	runtime.AddInput(th, runtime.Input{Kind: "binary", Name: out.Path, Hash: out.SHA256})
	return &Binary{*out}, nil
}

type buildSpec struct {
	pkg, rev, repo string
	options
}

// buildAt builds spec, reusing a cached binary of the same commit and
// settings unless the cell was forced (-rerun, :rerun).
func buildAt(th *starlark.Thread, spec buildSpec) (*binary, error) {
	ctx := runtime.Context(th)
	src := spec.repo
	var commit string
	dirty := false
	if spec.rev == "" {
		state, err := treeState(ctx, spec.repo)
		if err != nil {
			return nil, err
		}
		commit, dirty = state.head, state.dirty
		src = spec.repo
		if dirty {
			commit += "+" + state.diffHash[:12]
		}
	} else {
		c, err := git(ctx, spec.repo, "rev-parse", "--verify", spec.rev+"^{commit}")
		if err != nil {
			return nil, fmt.Errorf("rev %q: %w", spec.rev, err)
		}
		commit = c
	}
	env := spec.environ()
	settings, err := goSettings(ctx, src, env, spec.options)
	if err != nil {
		return nil, err
	}
	dir := binDir(th, spec, commit, settings)
	exe := filepath.Join(dir, filepath.Base(strings.TrimRight(spec.pkg, "/.")))
	if exe == filepath.Join(dir, "") || filepath.Base(spec.pkg) == "." {
		exe = filepath.Join(dir, "main")
	}
	_, err = os.Stat(exe)
	if err != nil || runtime.Forced(th) {
		fmt.Fprintf(runtime.Stderr(th), "build: %s at %s\n", spec.pkg, short(commit))
		if spec.rev != "" {
			wt, cleanup, err := worktree(ctx, spec.repo, commit)
			if err != nil {
				return nil, err
			}
			defer cleanup()
			src = wt
		}
		if err := goBuild(ctx, src, spec.pkg, exe, env, spec.flags()); err != nil {
			return nil, err
		}
	}
	sum, err := runtime.FileSHA256(exe)
	if err != nil {
		return nil, err
	}
	interp, err := kit.Interpreter(exe)
	if err != nil {
		return nil, err
	}
	return &binary{Path: exe, SHA256: sum, Rev: commit, Dirty: dirty, Pkg: spec.pkg, Settings: settings, Interpreter: interp}, nil
}

func binDir(th *starlark.Thread, spec buildSpec, commit, settings string) string {
	h := sha256.Sum256([]byte(spec.repo + "\x00" + commit + "\x00" + spec.pkg + "\x00" + settings))
	base, err := runtime.ResourceDir(th, "bin")
	if err != nil {
		base = os.TempDir()
	}
	// Binaries are shared by every cell: go up from the cell's own dir to
	// the resources root.
	_ = os.Remove(base) // only the path was wanted
	if abs, err := filepath.Abs(base); err == nil {
		base = abs
	}
	root := filepath.Dir(filepath.Dir(base))
	return filepath.Join(root, "bin", hex.EncodeToString(h[:10]))
}

func short(commit string) string { return commit[:min(12, len(commit))] }

// worktree checks commit out in a temporary worktree.
func worktree(ctx context.Context, repo, commit string) (string, func(), error) {
	tmp, err := os.MkdirTemp("", "benchbook-build-")
	if err != nil {
		return "", nil, err
	}
	wt := filepath.Join(tmp, "src")
	if _, err := git(ctx, repo, "worktree", "add", "--detach", wt, commit); err != nil {
		os.RemoveAll(tmp)
		return "", nil, err
	}
	cleanup := func() {
		_, _ = git(context.Background(), repo, "worktree", "remove", "--force", wt)
		os.RemoveAll(tmp)
		_, _ = git(context.Background(), repo, "worktree", "prune")
	}
	return wt, cleanup, nil
}

// goBuild builds pkg in dir into exe (through a temp name, then rename, so
// a half-written binary is never taken from the cache).
func goBuild(ctx context.Context, dir, pkg, exe string, env, flags []string) error {
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		return err
	}
	tmp := exe + ".tmp"
	cmd := exec.CommandContext(ctx, "go", append(append([]string{"build", "-o", tmp}, flags...), pkg)...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := child.Run(cmd); err != nil {
		return fmt.Errorf("go build %s: %w\n  %s", pkg, err, strings.ReplaceAll(strings.TrimSpace(out.String()), "\n", "\n  "))
	}
	return os.Rename(tmp, exe)
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := child.Run(cmd); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("git %s: %s", args[0], strings.TrimSpace(stderr.String()))
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return strings.TrimSpace(out.String()), nil
}

func gitTop(ctx context.Context, dir string) (string, error) {
	return git(ctx, dir, "rev-parse", "--show-toplevel")
}

type tree struct {
	head     string
	dirty    bool
	diffHash string
}

// treeState is HEAD plus a hash of uncommitted changes (tracked diffs and
// the names and contents of untracked files).
func treeState(ctx context.Context, repo string) (tree, error) {
	head, err := git(ctx, repo, "rev-parse", "HEAD")
	if err != nil {
		return tree{}, err
	}
	status, err := git(ctx, repo, "status", "--porcelain")
	if err != nil {
		return tree{}, err
	}
	h := sha256.New()
	if status != "" {
		diff, _ := git(ctx, repo, "diff", "HEAD")
		io.WriteString(h, diff)
		untracked, err := git(ctx, repo, "ls-files", "-z", "--others", "--exclude-standard")
		if err != nil {
			return tree{}, err
		}
		for _, f := range strings.Split(untracked, "\x00") {
			if f == "" {
				continue
			}
			sum, err := untrackedHash(filepath.Join(repo, f))
			if err != nil {
				return tree{}, fmt.Errorf("untracked file: %w", err)
			}
			io.WriteString(h, f+"\x00"+sum+"\x00")
		}
	}
	return tree{head: head, dirty: status != "", diffHash: hex.EncodeToString(h.Sum(nil))}, nil
}

// untrackedHash stands for an untracked file's content as git would take
// it: a symlink by its target's name (never followed: it may lead to
// /dev/zero), a file by its hash (a FIFO or a device refused by name).
// Names come NUL-separated, so one with a space is hashed too.
func untrackedHash(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(path)
		return "link:" + target, err
	}
	return runtime.FileSHA256(path)
}

// gitInputHash is the checker of "git" inputs named "repo@rev": the commit
// rev resolves to now; for the working tree (rev "") also its changes.
func gitInputHash(name string) (string, error) {
	i := strings.LastIndex(name, "@")
	if i < 0 {
		return "", fmt.Errorf("git input %q: want repo@rev", name)
	}
	repo, rev := name[:i], name[i+1:]
	ctx := context.Background()
	if rev != "" {
		return git(ctx, repo, "rev-parse", "--verify", rev+"^{commit}")
	}
	t, err := treeState(ctx, repo)
	if err != nil {
		return "", err
	}
	if t.dirty {
		return t.head + "+" + t.diffHash, nil
	}
	return t.head, nil
}

// Binary is the Starlark face of a binary: the value build returns.
type Binary struct{ b binary }

var (
	_ starlark.HasAttrs   = (*Binary)(nil)
	_ starlark.Comparable = (*Binary)(nil)
	_ codec.Marshaler     = (*Binary)(nil)
	_ handle.Executable   = (*Binary)(nil) // a cmd of backend.process and backend.container
)

// Path is the binary's file.
func (v *Binary) Path() string { return v.b.Path }

func (v *Binary) String() string {
	d := ""
	if v.b.Dirty {
		d = " dirty"
	}
	if v.b.Interpreter == "" && v.b.Settings != "" {
		d += " static"
	}
	return fmt.Sprintf("<binary %s @%s%s sha256:%s>", v.b.Pkg, short(v.b.Rev), d, v.b.SHA256[:12])
}
func (v *Binary) Type() string          { return "binary" }
func (v *Binary) Freeze()               {}
func (v *Binary) Truth() starlark.Bool  { return true }
func (v *Binary) Hash() (uint32, error) { return starlark.String(v.b.SHA256).Hash() }

// CompareSameType: two builds are equal when they name the same binary
// (same hash, so the same hash code), revision and package.
func (v *Binary) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	return starval.EqualOnly(op, v.b == y.(*Binary).b, v, y)
}
func (v *Binary) MarshalValue() ([]byte, error) { return json.Marshal(v.b) }
func (v *Binary) AttrNames() []string {
	return []string{"dirty", "interpreter", "path", "pkg", "rev", "settings", "sha256", "static"}
}

func (v *Binary) Attr(name string) (starlark.Value, error) {
	return starlarkstruct.FromStringDict(starlark.String("binary"), starlark.StringDict{
		"path": starlark.String(v.b.Path), "sha256": starlark.String(v.b.SHA256),
		"rev": starlark.String(v.b.Rev), "dirty": starlark.Bool(v.b.Dirty), "pkg": starlark.String(v.b.Pkg),
		"settings": starlark.String(v.b.Settings), "interpreter": starlark.String(v.b.Interpreter),
		"static": starlark.Bool(v.b.Interpreter == ""),
	}).Attr(name)
}

// Describe is the binary for a record's provenance: what was built, from
// what, how.
func (v *Binary) Describe() string {
	d := ""
	if v.b.Dirty {
		d = " (dirty)"
	}
	s := fmt.Sprintf("%s built at %s%s, sha256:%s", v.b.Pkg, short(v.b.Rev), d, v.b.SHA256[:16])
	if v.b.Settings != "" {
		s += ", " + v.b.Settings
	}
	return s
}
