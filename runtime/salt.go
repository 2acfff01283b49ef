package runtime

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchbook/benchbook/runtime/limits"
)

// saltFile holds the cache's random salt, beside entries/ and memo/ (which
// clean prunes; it never touches the salt). Parameters enter keys, inputs
// and last-params.json as HMAC-SHA256(salt, value): a plain hash of a DSN
// would let anyone who can read .benchbook/ try passwords against it
// offline; without the salt there is nothing to try them against. One salt
// per cache keeps keys stable from run to run (a hit stays a hit) and makes
// them differ between caches. Losing it only costs recomputation.
const saltFile = "salt"

const saltLen = 32

// loadSalt reads the cache's salt, creating it on first use (mode 0600:
// the salt is what keeps the parameter hashes from being brute-forced).
// It is read like every cache file (limits.ReadFile: regular files only,
// opened without blocking): a FIFO put in its place blocked the open until
// SIGKILL. Call it holding the cache lock.
func loadSalt(dir string) ([]byte, error) {
	path := filepath.Join(dir, saltFile)
	salt, err := limits.ReadFile(path, limits.Record)
	if errors.Is(err, fs.ErrNotExist) {
		return newSalt(path)
	}
	if err != nil {
		return nil, fmt.Errorf("cache: %w: remove it (cells that read a parameter then run again)", err)
	}
	if len(salt) != saltLen {
		return nil, fmt.Errorf("cache: %s holds %d bytes, not a %d-byte salt: remove it (cells that read a parameter then run again)", path, len(salt), saltLen)
	}
	return salt, nil
}

// newSalt writes a fresh salt to path atomically, so a run killed mid-write
// leaves a temp file (removed with the others) and never a short salt.
func newSalt(path string) ([]byte, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return nil, fmt.Errorf("cache: salt: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), tempPrefix+"salt-*") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	_, werr := tmp.Write(salt)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("cache: salt: %w", werr)
	}
	return salt, nil
}

// paramHash is how a parameter's value enters keys, input hashes and
// last-params.json: keyed with the cache's salt, truncated. A withheld
// value (last-params.json's) is its hash already. A session without a cache
// (tests, wlbench) has no salt, and stores nothing either.
func (s *Session) paramHash(v string) string {
	if h, ok := strings.CutPrefix(v, withheldParam); ok {
		return "set:" + h
	}
	m := hmac.New(sha256.New, s.paramSalt)
	m.Write([]byte("benchbook-param\x00" + v))
	return "set:" + hex.EncodeToString(m.Sum(nil))[:16]
}
