package engine

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/docker/docker/api/types/image"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// TestSweepRemovesOnlyOrphans: a container labelled by a benchbook whose
// pid is gone is swept; one of a live benchbook (this test) stays.
func TestSweepRemovesOnlyOrphans(t *testing.T) {
	ctx := context.Background()
	e, err := Connect(ctx)
	if err != nil {
		needs.Missing(t, "a container engine", "apt-get install docker.io; dockerd &")
		return
	}
	defer e.Close()
	// Any local image will do: the containers are created, never started.
	imgs, err := e.cli.ImageList(ctx, image.ListOptions{})
	if err != nil || len(imgs) == 0 {
		t.Skip("no image on the engine")
	}
	img := imgs[0].ID
	mk := func(pid, token string) string {
		cfg, host := configs(Spec{Image: img, Cmd: []string{"x"}}, token)
		cfg.Labels[LabelPid] = pid
		c, err := e.cli.ContainerCreate(ctx, cfg, host, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Remove(ctx, c.ID) })
		return c.ID
	}
	dead := mk("2147483000", "2147483000-dead")
	live := mk(strconv.Itoa(os.Getpid()), strconv.Itoa(os.Getpid())+"-live")
	gone, err := e.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.cli.ContainerInspect(ctx, dead); err == nil {
		t.Errorf("the orphan %s survived the sweep (swept %v)", dead[:12], gone)
	}
	if _, err := e.cli.ContainerInspect(ctx, live); err != nil {
		t.Errorf("the live benchbook's container was swept: %v", err)
	}
	if !slices.ContainsFunc(gone, func(s string) bool { return s != "" }) {
		t.Errorf("Sweep said it removed nothing")
	}
}
