package docker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/docker/dockertest"
)

// TestImportReplacesTheNamedImage: importing a ref again removes the image
// the ref named before, so rebuilding a test or notebook image does not
// pile up nameless images (the engine's own inspect is the oracle).
func TestImportReplacesTheNamedImage(t *testing.T) {
	e := dockertest.Engine(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ref = "benchbook-test/import-replace:1"
	id := func() string {
		d, err := e.ImageDigest(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(d)[0]
	}
	if err := e.Import(ctx, dockertest.Layer("one"), ref, nil); err != nil {
		t.Fatal(err)
	}
	first := id()
	if err := e.Import(ctx, dockertest.Layer("two"), ref, nil); err != nil {
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
