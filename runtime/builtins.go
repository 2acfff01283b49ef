package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/filehash"
	"github.com/benchbook/benchbook/runtime/limits"
	"github.com/benchbook/benchbook/runtime/redact"
)

// The engine's own builtins (param, file, memo), predeclared by its Core
// module (module.go).

// MarshalValue stores printed text.
func (p Printed) MarshalValue() ([]byte, error) { return []byte(p), nil }

func param(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var def starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "default", &def); err != nil {
		return nil, err
	}
	s := session(t)
	if err := s.checkDefault(name, def); err != nil {
		return nil, err
	}
	raw, ok := Param(t, name)
	AddInput(t, Input{Kind: "param", Name: name, Hash: s.paramValue(name)})
	if !ok {
		if s, isStr := def.(starlark.String); isStr && redact.SecretName(name) {
			redact.LearnValue(string(s)) // a password left at its default is a password
		}
		return def, nil
	}
	if strings.HasPrefix(raw, withheldParam) {
		return nil, fmt.Errorf("param: %s held a secret in the last run, which benchbook does not save; set it again with -p %s=...", name, name)
	}
	v, err := typedLike(def, raw)
	if err != nil {
		return nil, fmt.Errorf("param: -p %s=%s: %v", name, raw, err)
	}
	return v, nil
}

// typedLike converts a command-line string to the type of def.
func typedLike(def starlark.Value, raw string) (starlark.Value, error) {
	switch def.(type) {
	case starlark.Int:
		n, err := strconv.ParseInt(strings.ReplaceAll(raw, "_", ""), 0, 64)
		if err != nil {
			return nil, fmt.Errorf("want an int like the default %s", def)
		}
		return starlark.MakeInt64(n), nil
	case starlark.Float:
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, fmt.Errorf("want a float like the default %s", def)
		}
		return starlark.Float(f), nil
	case starlark.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, fmt.Errorf("want true or false like the default %s", def)
		}
		return starlark.Bool(b), nil
	case *starlark.List:
		var elems []starlark.Value
		for _, s := range strings.Split(raw, ",") {
			elems = append(elems, starlark.String(strings.TrimSpace(s)))
		}
		if l := def.(*starlark.List); l.Len() > 0 {
			for i, s := range elems {
				v, err := typedLike(l.Index(0), string(s.(starlark.String)))
				if err != nil {
					return nil, fmt.Errorf("element %d: %v", i, err)
				}
				elems[i] = v
			}
		}
		return starlark.NewList(elems), nil
	}
	return starlark.String(raw), nil
}

func file(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path); err != nil {
		return nil, err
	}
	full, err := filepath.Abs(Path(t, path))
	if err != nil {
		return nil, fmt.Errorf("file: %v", err)
	}
	if inCache(t, full) {
		// A cluster's data dir and its snapshots hold what the server
		// wrote (pg_stat_statements keeps CREATE ROLE ... PASSWORD texts):
		// none of it belongs in a record.
		return nil, fmt.Errorf("file: %s is inside benchbook's cache (resources' data, snapshots, entries): not an input a notebook reads", path)
	}
	data, err := limits.ReadFile(full, limits.File)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	sum := sha256.Sum256(data)
	AddInput(t, Input{Kind: "file", Name: full, Hash: hex.EncodeToString(sum[:])})
	return starlark.String(data), nil
}

// fileHash re-checks a file input; a missing file is its own hash value.
func fileHash(path string) (string, error) {
	sum, err := FileSHA256(path)
	if errors.Is(err, os.ErrNotExist) {
		return "missing", nil
	}
	return sum, err
}

// FileSHA256 is filehash.SHA256 of a regular file: a FIFO or a device is
// refused by name (limits.Regular) instead of read until it ends, which it
// may never do. The check lives here, not in filehash, so that the agent's
// leaf stays free of Starlark. A file whose identity (device, inode, size,
// modification and change times) is the one it had when hashed, at least
// a second after it last changed, is not read again: every lookup re-checks
// every input, and ten exec cells of one notebook each hashed the 7 MB
// python3 they run.
func FileSHA256(path string) (string, error) {
	if err := limits.Regular(path); err != nil {
		return "", err
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	id, ok := fileIdentity(st)
	if ok {
		if h, hit := hashMemo.Load(path); hit && h.(memoHash).id == id {
			return h.(memoHash).sum, nil
		}
	}
	sum, err := filehash.SHA256(path)
	if err == nil && ok && time.Since(id.changed) > time.Second {
		// A file changed within the last second may change again within
		// the same clock tick, unseen by its times (git's "racy" case).
		hashMemo.Store(path, memoHash{id, sum})
	}
	return sum, err
}

// hashMemo maps a path to its last hash and the identity it had then.
var hashMemo sync.Map

type memoHash struct {
	id  fileID
	sum string
}

type fileID struct {
	dev, ino, size int64
	mtime, ctime   int64
	changed        time.Time
}

func fileIdentity(st os.FileInfo) (fileID, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	ctime := time.Unix(sys.Ctim.Unix())
	changed := st.ModTime()
	if ctime.After(changed) {
		changed = ctime
	}
	return fileID{dev: int64(sys.Dev), ino: int64(sys.Ino), size: st.Size(),
		mtime: st.ModTime().UnixNano(), ctime: ctime.UnixNano(), changed: changed}, true
}

func memo(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var key string
	var fn starlark.Callable
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "key", &key, "fn", &fn); err != nil {
		return nil, err
	}
	return MemoCall(t, key, fn)
}
