package backend

import (
	"archive/tar"
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/engine/enginetest"
)

// TestImageInputFollowsTheTag: the "image" input a container or an image
// cluster records is re-checked against what the tag names now, so a tag
// moved to another build makes the cells measured on the old one stale
// (the engine's own inspect of the new import is the oracle).
func TestImageInputFollowsTheTag(t *testing.T) {
	e := enginetest.Engine(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ref = "benchbook-test/image-input:1"
	layer := func(content string) *bytes.Buffer {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		tw.WriteHeader(&tar.Header{Name: "f", Mode: 0o644, Size: int64(len(content))}) //nolint:errcheck // a bytes.Buffer
		tw.Write([]byte(content))                                                      //nolint:errcheck
		tw.Close()                                                                     //nolint:errcheck
		return &buf
	}
	if err := e.Import(ctx, layer("build one"), ref, nil); err != nil {
		t.Fatal(err)
	}
	recorded, err := currentImage(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Import(ctx, layer("build two"), ref, nil); err != nil {
		t.Fatal(err)
	}
	want, err := e.ImageDigest(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	defer e.RemoveImage(context.Background(), ref) //nolint:errcheck
	now, err := currentImage(ref)
	if err != nil {
		t.Fatal(err)
	}
	if now == recorded || now != want {
		t.Errorf("after the tag moved the check says %q (recorded %q, the engine %q)", now, recorded, want)
	}
}
