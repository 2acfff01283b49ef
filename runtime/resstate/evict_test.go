package resstate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEvictionCountsSharedFilesOnce: snapshots that hard-link a large
// file of their base take only their own bytes of the limit, so a limit
// that holds the large file once and a few small ones keeps them all; a
// tighter one evicts the least recently used until the snapshots fit,
// never the states the walk expects. The oracle is du, which counts a
// file with several names once.
func TestEvictionCountsSharedFilesOnce(t *testing.T) {
	if _, err := exec.LookPath("du"); err != nil {
		t.Skip("no du")
	}
	id := t.TempDir()
	const big, own = 200 << 10, 4 << 10
	r := &Resource{ID: id, Name: "fake", Save: func(dir, base string) error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if base != "" {
			if err := os.Link(filepath.Join(base, "big"), filepath.Join(dir, "big")); err != nil {
				return err
			}
		} else if err := os.WriteFile(filepath.Join(dir, "big"), make([]byte, big), 0o644); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "own"), []byte(strings.Repeat(dir, own)[:own]), 0o644)
	}}
	tr := New(func(string) {}, func(d time.Duration) string { return d.String() })
	x := &tracked{r: r}
	tr.limit = big + 6*own + 1024 // the big file once, six small ones
	prev := ""
	for i := range 6 {
		s := fmt.Sprintf("s%d", i)
		if err := tr.snapshot(x, s, prev); err != nil {
			t.Fatal(err)
		}
		// Older snapshots were used earlier: their dir times order them.
		when := time.Now().Add(time.Duration(i-10) * time.Minute)
		os.Chtimes(snapshotDir(id, s), when, when)
		prev = s
	}
	if n := kept(t, id); n != 6 {
		t.Fatalf("under a limit that holds them all, %d of 6 snapshots kept (du: %d bytes)", n, du(t, id))
	}
	tr.limit = big + 3*own + 1024
	tr.expect[id] = "s0" // the walk still needs the oldest: never evicted
	tr.evict(id)
	names := keptNames(t, id)
	if got := du(t, id); got > tr.limit || len(names) != 3 || names[0] != "s0" || names[1] != "s4" || names[2] != "s5" {
		t.Errorf("after evicting to %d bytes: kept %v, du %d bytes; want s0 (expected), s4, s5", tr.limit, names, got)
	}
	for _, n := range names {
		if data, err := os.ReadFile(filepath.Join(snapshotDir(id, n), "big")); err != nil || len(data) != big {
			t.Errorf("%s lost its big file: %d bytes, %v", n, len(data), err)
		}
	}
}

func keptNames(t *testing.T, id string) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(id, "states", "*"))
	var names []string
	for _, d := range dirs {
		names = append(names, filepath.Base(d))
	}
	return names
}

func kept(t *testing.T, id string) int { return len(keptNames(t, id)) }

// du is the apparent size of the snapshots' files, as du counts it (each
// file once, however many names it has), less its directories' own sizes.
func du(t *testing.T, id string) int64 {
	t.Helper()
	out, err := exec.Command("du", "-sb", "--apparent-size", filepath.Join(id, "states")).Output()
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.Fields(string(out))[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	filepath.Walk(filepath.Join(id, "states"), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() {
			n -= fi.Size()
		}
		return err
	})
	return n
}
