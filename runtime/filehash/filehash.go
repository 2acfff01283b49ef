// Package filehash is the hash of a file's content, in a leaf of its own:
// the engine keys file inputs with it, and an agent (package fleet) checks
// the binary it copies to a remote host with it, without linking the
// engine (Starlark, goldmark, chroma).
package filehash

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
)

// SHA256 is the hex SHA-256 of a file's content, read as a stream: the
// hash of every file-like input (notebook files, binaries, SQLite files).
func SHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
