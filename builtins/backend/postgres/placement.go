package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/docker"
	"github.com/benchbook/benchbook/builtins/internal/guard"
)

// placement is where a cluster's server runs: processes on the host, run
// as the cluster's account (pgHost, host.go), or containers of an image
// (pgImage, image.go). Everything else of a cluster (its data dir, its
// settings, port and socket, snapshots, the cache's state) is the same in
// both, and is the cluster's.
type placement interface {
	// initdb makes the (absent) data dir and fills it.
	initdb(ctx context.Context, c *cluster) error
	// start starts the postmaster on the cluster's data dir, its output
	// to logf (the cluster's log), and sets c.done, closed when it exits.
	start(ctx context.Context, c *cluster, logf *os.File) error
	// stop shuts the postmaster down fast and waits for done.
	stop(done <-chan struct{})
	// started says whether a postmaster was started and not stopped since.
	started() bool
	// pid is the postmaster's host pid, 0 when it does not run.
	pid() int
	// cgroup is the group of the server's processes, for observers (nil:
	// none).
	cgroup() *cgroup.Group
	// watch guards the postmaster through a run: its exit and OOM kills;
	// nil ended when nothing is started to watch.
	watch(ctx context.Context, t0 time.Time, c *cluster) (ended, ooms func() []guard.Trip)
	// ref is the image's reference, "" on the host.
	ref() string
	// addInput records where the server runs in the creating cell's
	// provenance, under name.
	addInput(th *starlark.Thread, name string, l cgroup.Limits)
	// binaries names the PostgreSQL it runs: the host's postgres, or the
	// image by its digest (a tag that moves to another build is another
	// server, so another initial state).
	binaries() string
	// close releases what the placement holds beyond a start (the
	// engine's client); the cluster is stopped.
	close()
}

// at is the cluster's placement: its image's containers, else the host.
func (c *cluster) at() placement {
	if c.img != nil {
		return c.img
	}
	return &c.host
}

// pgOptions are where backend.postgres runs its cluster: an image (""
// for the host) and limits.
type pgOptions struct {
	image  string
	limits cgroup.Limits
}

// place readies the cluster's side: the host's binaries, or the engine and
// the image.
func (c *cluster) place(ctx context.Context, opts pgOptions) error {
	if opts.image == "" {
		_, err := lookBin("postgres")
		return err
	}
	eng, err := docker.Connect(ctx)
	if err != nil {
		return err
	}
	digest, err := eng.ImageDigest(ctx, opts.image)
	if err != nil {
		eng.Close()
		return fmt.Errorf("image: %w", err)
	}
	c.img = &pgImage{image: opts.image, digest: digest, eng: eng}
	return nil
}

// placed says whether the cluster runs where opts say.
func (c *cluster) placed(opts pgOptions) bool {
	return c.at().ref() == opts.image && c.limits == opts.limits
}

// addPlaceInput records the container and limits in the creating cell's
// provenance.
func (c *cluster) addPlaceInput(th *starlark.Thread) {
	c.at().addInput(th, filepath.Base(filepath.Dir(c.root)), c.limits)
}

// cgroup is the group the cluster's processes are in, for observers: the
// limits group of a host cluster, the container's of an image cluster,
// nil for a host cluster without limits.
func (c *cluster) cgroup() *cgroup.Group { return c.at().cgroup() }

// binaries names the PostgreSQL the cluster runs (placement.binaries).
func (c *cluster) binaries() string { return c.at().binaries() }
