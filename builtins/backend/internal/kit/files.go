package kit

import (
	"os"
	"path/filepath"
)

// WriteOwn writes one of a resource's own small files (a cluster's port,
// a SQLite file's noted identity) whole: into a new file beside it,
// renamed over it. A reader never sees half of it, and a FIFO put there is
// replaced, not opened (an open for writing would wait for a reader, deaf
// to signals).
func WriteOwn(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
