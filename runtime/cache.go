package runtime

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/hostinfo"
	"github.com/benchbook/benchbook/runtime/limits"
	"github.com/benchbook/benchbook/runtime/redact"
)

// FormatVersion is part of every key and every path in the cache: a change
// of the entry format or of the key recipe bumps it.
const FormatVersion = 1

// entry is what the cache keeps for one executed cell.
type entry struct {
	Format   int               `json:"format"`
	Cell     string            `json:"cell"` // name when computed (informational)
	Key      string            `json:"key"`
	Live     bool              `json:"live"`    // values not storable: re-executed on demand
	Values   map[string][]byte `json:"values"`  // codec bytes by global name
	Hashes   map[string]string `json:"hashes"`  // sha256 of Values, read by downstream keys
	Outputs  [][]byte          `json:"outputs"` // codec bytes, in order
	Inputs   []Input           `json:"inputs"`  // dynamic inputs, re-checked on lookup
	Warnings []string          `json:"warnings"`
	Started  time.Time         `json:"started"`
	Duration time.Duration     `json:"duration"`
	Host     hostinfo.Host     `json:"host"`
	Version  string            `json:"version"` // benchbook version
	// Identities of a live entry's values (not stored, not hashed into
	// keys): to say which of them changed when its key moves (why.go).
	Identities map[string]string `json:"identities,omitempty"`
}

// store is the content-addressed cache beside a notebook.
type store struct {
	dir string // <cache dir>/v<FormatVersion>
}

func openStore(cacheDir string) (*store, error) {
	dir := filepath.Join(cacheDir, "v"+strconv.Itoa(FormatVersion))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		if errors.Is(err, syscall.EROFS) || errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("cache: %w (the cache lives beside the notebook by default; give a writable one with -cache-dir DIR)", err)
		}
		return nil, fmt.Errorf("cache: %w", err)
	}
	return &store{dir: dir}, nil
}

func (s *store) entryPath(key string) string {
	return filepath.Join(s.dir, "entries", key[:2], key)
}

// memoPath names a checkpoint: under its cell's key (clean keeps the
// checkpoints of current keys), by the inputs met before the call and key.
func (s *store) memoPath(scope, key string) string {
	cellKey, inputs, _ := strings.Cut(scope, "/")
	return filepath.Join(s.dir, "memo", cellKey[:2], cellKey, hashString(inputs, key))
}

// errDamaged marks an entry whose checksum or encoding is wrong.
var errDamaged = errors.New("damaged cache entry")

const magic = "benchbook-entry"

// get reads an entry; a missing one is (nil, nil), a damaged one errDamaged.
func (s *store) get(key string) (*entry, error) {
	var e entry
	path := s.entryPath(key)
	if err := readChecked(path, &e); err != nil || e.Key == "" {
		return nil, err
	}
	if err := e.holdsTogether(path); err != nil {
		return nil, err
	}
	return &e, nil
}

// holdsTogether checks that every value hashes to the hash recorded for
// it, which is what the keys of the cells reading it chain: a value
// rewritten by hand (the file's checksum recomputed) was served beside
// dependents keyed by, and computed from, the old one. Such an entry is
// damaged; one whose hashes were rewritten too keys its dependents anew.
func (e *entry) holdsTogether(path string) error {
	if len(e.Values) != len(e.Hashes) {
		return fmt.Errorf("%w: %s: %d values, %d hashes", errDamaged, path, len(e.Values), len(e.Hashes))
	}
	for name, data := range e.Values {
		sum := sha256.Sum256(data)
		if e.Hashes[name] != hex.EncodeToString(sum[:]) {
			return fmt.Errorf("%w: %s: value %s does not match its recorded hash", errDamaged, path, name)
		}
	}
	return nil
}

// put stores e as its key's entry. An entry with dynamic inputs (files, a
// parameter named at run time) is also kept as a variant named by those
// inputs, so going back to an earlier input (a config file A -> B -> A)
// finds that execution again instead of recomputing.
func (s *store) put(e *entry) error {
	path := s.entryPath(e.Key)
	if len(e.Inputs) == 0 {
		return writeChecked(path, e)
	}
	variant := path + variantSep + inputsHash(e.Inputs)
	if err := writeChecked(variant, e); err != nil {
		return err
	}
	s.trimVariants(path)
	// The entry itself is a second name of the newest variant: link a
	// temporary name, then rename it over the entry, atomically.
	tmp := filepath.Join(filepath.Dir(path), tempPrefix+"link-"+filepath.Base(path))
	os.Remove(tmp)
	if err := os.Link(variant, tmp); err != nil {
		return writeChecked(path, e)
	}
	if err := renameOver(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// renameOver renames the file tmp to path, in the cache, where path may
// be a directory that is no entry (a user's mkdir, a copy gone wrong):
// it is removed, or every run recomputed the cell and warned "is a
// directory", never repairing it.
func renameOver(tmp, path string) error {
	rerr := syscall.Rename(tmp, path)
	if rerr == syscall.EISDIR || rerr == syscall.EEXIST || rerr == syscall.ENOTEMPTY {
		if fi, err := os.Lstat(path); err == nil && fi.IsDir() && os.RemoveAll(path) == nil {
			rerr = syscall.Rename(tmp, path)
		}
	}
	if rerr != nil {
		return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: rerr}
	}
	return nil
}

// variantSep separates a key from the inputs hash in a variant's name.
const variantSep = "~"

// maxVariants bounds the variants kept per key, the oldest going first.
const maxVariants = 8

func inputsHash(inputs []Input) string {
	parts := make([]string, 0, 3*len(inputs))
	for _, in := range inputs {
		parts = append(parts, in.Kind, in.Name, in.Hash)
	}
	return hashString(parts...)[:16]
}

// variants lists the stored variants of an entry, newest first.
func (s *store) variants(path string) []string {
	paths, _ := filepath.Glob(path + variantSep + "*")
	mod := map[string]time.Time{}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			mod[p] = fi.ModTime()
		}
	}
	sort.Slice(paths, func(i, j int) bool { return mod[paths[i]].After(mod[paths[j]]) })
	return paths
}

func (s *store) trimVariants(path string) {
	for _, old := range s.variants(path)[min(maxVariants, len(s.variants(path))):] {
		os.Remove(old)
	}
}

// getVariant returns the newest stored variant of key's entry whose inputs
// ok accepts, or nil. Damaged variants are skipped.
func (s *store) getVariant(key string, ok func([]Input) bool) *entry {
	for _, p := range s.variants(s.entryPath(key)) {
		var e entry
		if err := readChecked(p, &e); err == nil && e.Key == key && e.holdsTogether(p) == nil && ok(e.Inputs) {
			return &e
		}
	}
	return nil
}

// readChecked reads a file written by writeChecked into v.
func readChecked(path string, v any) error {
	data, err := limits.ReadFile(path, limits.Record)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	header, body, ok := bytes.Cut(data, []byte("\n"))
	want := fmt.Sprintf("%s %d ", magic, FormatVersion)
	if !ok || !bytes.HasPrefix(header, []byte(want)) {
		return fmt.Errorf("%w: %s: bad header", errDamaged, path)
	}
	sum := sha256.Sum256(body)
	if string(header[len(want):]) != hex.EncodeToString(sum[:]) {
		return fmt.Errorf("%w: %s: checksum mismatch", errDamaged, path)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %s: %v", errDamaged, path, err)
	}
	return nil
}

// writeChecked writes v atomically (temp file, rename) with a checksum
// header, so a crash of benchbook leaves either the old file or the new
// one. It does not fsync: that waited for the disk once per cell (1-2 ms
// an entry on the project's VM: a 3,000-cell cold run took 11.5 s with it,
// 9.4 s without, at load 10-14), and bought only survival of a power cut,
// after which an entry whose data never reached the disk fails its
// checksum, is reported as damaged and is computed again (as Go's build
// cache trusts checksums, not fsync).
//
// It makes a file in four system calls (open, write, close, rename) and
// its directory only when the open says it is missing: through os
// (MkdirAll's stats, CreateTemp's netpoller attempt, a Remove of the temp
// name after the rename) it took eighteen, and a cold 3,000-cell run
// writes 3,000 entries (issue 38).
func writeChecked(path string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	sum := sha256.Sum256(body)
	header := fmt.Sprintf("%s %d %s\n", magic, FormatVersion, hex.EncodeToString(sum[:]))
	data := append(append(make([]byte, 0, len(header)+len(body)), header...), body...)
	tmp, fd, err := createTemp(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	// A full disk fails a write (ext4 and xfs reserve the blocks of a
	// delayed allocation at write, tmpfs allocates them): the entry must
	// not be renamed into place short.
	err = writeAll(fd, data)
	if cerr := syscall.Close(fd); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		err = &os.PathError{Op: "write", Path: tmp, Err: err}
	}
	if err == nil {
		err = renameOver(tmp, path)
	}
	if err != nil {
		syscall.Unlink(tmp)
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

// createTemp creates a new file for writing in dir (made if missing),
// named tempPrefix and a random number, as os.CreateTemp does.
func createTemp(dir string) (string, int, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, tempPrefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		fd, err := syscall.Open(name, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o600)
		switch {
		case err == nil:
			return name, fd, nil
		case err == syscall.ENOENT && try == 0:
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return "", -1, err
			}
		case (err == syscall.EEXIST || err == syscall.EINTR) && try < 100:
		default:
			return "", -1, &os.PathError{Op: "open", Path: name, Err: err}
		}
	}
}

// writeAll writes b to fd whole, or fails.
func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := syscall.Write(fd, b)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return err
		case n == 0:
			return syscall.EIO
		}
		b = b[n:]
	}
	return nil
}

// tempPrefix starts the name of every file writeChecked (or put) has not
// yet renamed into place.
const tempPrefix = ".tmp-"

// removeTemps deletes the temporary files a killed run left behind. Call it
// holding the cache lock: then no other writer's temp file can be in flight.
func (s *store) removeTemps() (n int, bytes int64) {
	filepath.WalkDir(s.dir, func(path string, d os.DirEntry, err error) error {
		// "KEY.tmp-link" is the older name of put's link.
		temp := strings.HasPrefix(d.Name(), tempPrefix) || strings.HasSuffix(d.Name(), ".tmp-link")
		if err != nil || d.IsDir() || !temp {
			return nil
		}
		if info, err := d.Info(); err == nil {
			bytes += info.Size()
		}
		if os.Remove(path) == nil {
			n++
		}
		return nil
	})
	return n, bytes
}

// memoEntry is one memo(key, fn) result, with what fn met and emitted.
type memoEntry struct {
	Key      string    `json:"key"`
	Value    []byte    `json:"value"`
	When     time.Time `json:"when"`
	Inputs   []Input   `json:"inputs,omitempty"`
	Outputs  [][]byte  `json:"outputs,omitempty"`
	Warnings []string  `json:"warnings,omitempty"`
}

// memoStore adapts the store to the MemoStore the builtins use.
type memoStore struct {
	s       *store
	types   codec.Types // the engine's modules' decoders
	warn    func(string)
	stale   func([]Input) string // why recorded inputs no longer hold, or ""
	written *memoWrites          // the checkpoints this engine wrote (rescrub)
}

func (m memoStore) Get(scope, key string) (*Checkpoint, bool) {
	var e memoEntry
	if err := readChecked(m.s.memoPath(scope, key), &e); err != nil {
		m.warn(fmt.Sprintf("memo %q recomputed: %v", key, err))
		return nil, false
	}
	if e.Key != redact.String(key) || m.stale(e.Inputs) != "" {
		return nil, false
	}
	v, err := codec.Decode(e.Value, m.types)
	if err != nil {
		m.warn(fmt.Sprintf("memo %q recomputed: %v", key, err))
		return nil, false
	}
	cp := &Checkpoint{Value: v, Inputs: e.Inputs, Warnings: e.Warnings}
	for _, data := range e.Outputs {
		out, err := codec.Decode(data, m.types)
		if err != nil {
			m.warn(fmt.Sprintf("memo %q recomputed: %v", key, err))
			return nil, false
		}
		cp.Outputs = append(cp.Outputs, out)
	}
	return cp, true
}

func (m memoStore) Put(scope, key string, cp *Checkpoint) error {
	if _, secret := redact.Value(cp.Value); secret {
		return errors.New("it holds a secret, never written to disk")
	}
	data, err := codec.Encode(cp.Value)
	if err != nil {
		return err
	}
	// The key is kept to catch a collision of its hash; a secret in it stays out.
	e := memoEntry{Key: redact.String(key), Value: data, When: time.Now(), Inputs: cp.Inputs, Warnings: redactAll(cp.Warnings)}
	for _, out := range redactOutputs(cp.Outputs) {
		b, err := codec.Encode(out)
		if err != nil {
			b, _ = codec.Encode(Printed(redact.String(out.String())))
		}
		e.Outputs = append(e.Outputs, b)
	}
	if err := writeChecked(m.s.memoPath(scope, key), e); err != nil {
		return err
	}
	m.written.add(scope, key)
	return nil
}

// ErrLocked is a cache whose lock another process holds, for an engine
// opened with Options.NoWait.
var ErrLocked = errors.New("the cache is locked by another process")

// lock takes the notebook's cache lock, so that two runs of one notebook
// do not interleave. If another process holds it, say who and wait, until
// ctx ends: a blocking flock is restarted after SIGINT and SIGTERM, so a
// run waiting for another could only be ended by SIGKILL. With noWait it
// fails with ErrLocked instead of waiting.
func lock(ctx context.Context, cacheDir string, noWait bool, say func(string)) (unlock func(), err error) {
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	path := filepath.Join(cacheDir, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cache lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := limits.ReadFile(path, limits.File)
		if noWait {
			f.Close()
			return nil, fmt.Errorf("%w: %s, held by %s", ErrLocked, path, strings.TrimSpace(string(holder)))
		}
		say(fmt.Sprintf("waiting for the cache lock %s, held by %s", path, strings.TrimSpace(string(holder))))
		if err := waitLock(ctx, f); err != nil {
			f.Close()
			return nil, fmt.Errorf("cache lock: %w", err)
		}
	}
	f.Truncate(0)
	fmt.Fprintf(f, "pid %d (%s)\n", os.Getpid(), strings.Join(redact.Args(os.Args), " "))
	return func() { f.Truncate(0); f.Close() }, nil
}

// waitLock polls for the lock every lockPoll until it is free or ctx ends.
func waitLock(ctx context.Context, f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil || err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(lockPoll):
		}
	}
}

const lockPoll = 50 * time.Millisecond
