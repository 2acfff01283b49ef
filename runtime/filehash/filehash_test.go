package filehash

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// The streamed hash equals the hash of the whole content read at once.
func TestSHA256(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	data := make([]byte, 100_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := SHA256(p)
	sum := sha256.Sum256(data)
	if want := hex.EncodeToString(sum[:]); err != nil || got != want {
		t.Fatalf("SHA256 = %q, %v; want %q", got, err, want)
	}
	if _, err := SHA256(filepath.Join(t.TempDir(), "missing")); !os.IsNotExist(err) {
		t.Fatalf("missing file: err = %v, want not-exist", err)
	}
}
