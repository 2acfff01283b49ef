package kit

import (
	"context"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/docker/dockertest"
)

// TestImageInputFollowsTheTag: the "image" input a container or an image
// cluster records is re-checked against what the tag names now, so a tag
// moved to another build makes the cells measured on the old one stale
// (the engine's own inspect of the new import is the oracle).
func TestImageInputFollowsTheTag(t *testing.T) {
	e := dockertest.Engine(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ref = "benchbook-test/image-input:1"
	if err := e.Import(ctx, dockertest.Layer("build one"), ref, nil); err != nil {
		t.Fatal(err)
	}
	recorded, err := CurrentImage(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Import(ctx, dockertest.Layer("build two"), ref, nil); err != nil {
		t.Fatal(err)
	}
	want, err := e.ImageDigest(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	defer e.RemoveImage(context.Background(), ref) //nolint:errcheck
	now, err := CurrentImage(ref)
	if err != nil {
		t.Fatal(err)
	}
	if now == recorded || now != want {
		t.Errorf("after the tag moved the check says %q (recorded %q, the engine %q)", now, recorded, want)
	}
}
