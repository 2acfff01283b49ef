// Package filehash is the hash of a file's content, in a leaf of its own:
// the engine keys file inputs with it, and an agent (package fleet) checks
// the binary it copies to a remote host with it, without linking the
// engine (Starlark, goldmark, chroma).
package filehash

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"syscall"
)

// SHA256 is the hex SHA-256 of a regular file's content, read as a stream:
// the hash of every file-like input (notebook files, binaries, SQLite
// files). It opens without blocking and refuses what is not a regular file
// (a FIFO, a device), whose read may never end, even one swapped in after
// a caller checked the path.
func SHA256(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return "", err
	} else if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
