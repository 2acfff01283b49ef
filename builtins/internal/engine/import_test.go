package engine_test

import (
	"archive/tar"
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/engine/enginetest"
)

// TestImportReplacesTheNamedImage: importing a ref again removes the image
// the ref named before, so rebuilding a test or notebook image does not
// pile up nameless images (the engine's own inspect is the oracle).
func TestImportReplacesTheNamedImage(t *testing.T) {
	e := enginetest.Engine(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ref = "benchbook-test/import-replace:1"
	layer := func(content string) *bytes.Buffer {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		if err := tw.WriteHeader(&tar.Header{Name: "f", Mode: 0o644, Size: int64(len(content))}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(content)) //nolint:errcheck // a bytes.Buffer
		tw.Close()                //nolint:errcheck
		return &buf
	}
	id := func() string {
		d, err := e.ImageDigest(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(d)[0]
	}
	if err := e.Import(ctx, layer("one"), ref, nil); err != nil {
		t.Fatal(err)
	}
	first := id()
	if err := e.Import(ctx, layer("two"), ref, nil); err != nil {
		t.Fatal(err)
	}
	second := id()
	t.Cleanup(func() { e.RemoveImage(context.Background(), second) }) //nolint:errcheck
	if first == second {
		t.Fatalf("two different layers gave one image %s", first)
	}
	if _, err := e.ImageDigest(ctx, first); err == nil {
		t.Errorf("the image %s that %s named before is still on the engine", first, ref)
	}
}
