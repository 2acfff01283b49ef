package postgres

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/docker"
	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/runtime"
)

// backend.postgres(image = "postgres:16") runs the throwaway cluster in a
// container of that image instead of on the host: initdb and the
// postmaster each run in a container, as the same account a host cluster
// runs as, over the same data dir under the cache, bind-mounted at the
// same path. So everything a host cluster has works unchanged: settings
// (benchbook.conf), restarts, snapshots and restores (the data dir copied
// while the container is gone), observers (on the container's cgroup),
// guards, the cache's state tracking. The container shares the host's
// network; the postmaster listens on 127.0.0.1 as on the host.
//
// The image needs initdb and postgres on its PATH (the official images
// have them) with pg_stat_statements. The account's uid need not exist in
// the image: a passwd file naming it is mounted over /etc/passwd.

// pgImage is the container side of a cluster.
type pgImage struct {
	image  string
	digest string // what image named when the cluster was placed
	eng    *docker.Engine

	mu   sync.Mutex
	ctr  *docker.Container // the running postmaster's container, nil when stopped
	quit context.CancelFunc
}

// spec is a container of the image running entry as the cluster's account,
// with the cluster's root (and socket dir) mounted where they are.
func (p *pgImage) spec(c *cluster, entry string, args ...string) (docker.Spec, error) {
	passwd, err := c.passwdFile()
	if err != nil {
		return docker.Spec{}, err
	}
	s := docker.Spec{
		Image: docker.ImageID(p.digest), Entry: []string{entry}, Cmd: args, Limits: c.limits,
		Volumes: map[string]string{c.root: c.root, passwd: "/etc/passwd:ro"},
		User:    strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid()),
		// The server's pids are the host's: pg_stat_activity's pids and
		// /proc's agree, so backend CPU is read as for a host cluster.
		HostPID: true,
	}
	if c.as != nil {
		s.User = fmt.Sprintf("%d:%d", c.as.uid, c.as.gid)
	}
	if c.sockDir != "" && !strings.HasPrefix(c.sockDir, c.root+string(filepath.Separator)) {
		s.Volumes[c.sockDir] = c.sockDir
	}
	return s, nil
}

// passwdFile names the cluster's account for the image's libc (initdb and
// postgres refuse a uid without a name).
func (c *cluster) passwdFile() (string, error) {
	uid, gid := os.Getuid(), os.Getgid()
	if c.as != nil {
		uid, gid = int(c.as.uid), int(c.as.gid)
	}
	path := filepath.Join(c.root, "passwd")
	data := fmt.Sprintf("root:x:0:0:root:/root:/bin/sh\npostgres:x:%d:%d:PostgreSQL:%s:/bin/sh\n", uid, gid, c.root)
	if uid == 0 {
		data = fmt.Sprintf("root:x:0:0:root:%s:/bin/sh\n", c.root)
	}
	return path, kit.WriteOwn(path, []byte(data))
}

// initdb runs initdb in a container and waits for it.
func (p *pgImage) initdb(ctx context.Context, c *cluster) error {
	if err := c.makeDataDir(); err != nil {
		return err
	}
	s, err := p.spec(c, "initdb", "-D", c.dataDir(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	if err != nil {
		return err
	}
	ctr, err := p.eng.Run(ctx, s)
	if err != nil {
		return fmt.Errorf("initdb in %s: %w", p.image, err)
	}
	defer p.eng.Remove(context.WithoutCancel(ctx), ctr.ID)
	var out bytes.Buffer
	lctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	_ = p.eng.FollowLogs(lctx, ctr.ID, &out)
	code := <-p.eng.Wait(lctx, ctr.ID)
	if code != 0 {
		why := fmt.Sprintf("exit code %d", code)
		if st, err := p.eng.Inspect(ctx, ctr.ID); err == nil {
			why = kit.ExitEvidence(p.eng.Settle(ctx, ctr.ID, st), nil, c.limits)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		return fmt.Errorf("initdb in %s: %s\n%s", p.image, why, kit.Indent(lines[max(0, len(lines)-15):]))
	}
	return nil
}

// start runs the postmaster in a container; its output goes to the
// cluster's log file as a host postmaster's does (through a file of its
// own: the copy outlives logf).
func (p *pgImage) start(ctx context.Context, c *cluster, _ *os.File) error {
	s, err := p.spec(c, "postgres", "-D", c.dataDir())
	if err != nil {
		return err
	}
	ctr, err := p.eng.Run(ctx, s)
	if err != nil {
		return fmt.Errorf("postgres in %s: %w", p.image, err)
	}
	logf, err := openLog(c.logPath())
	if err != nil {
		_ = p.eng.Remove(ctx, ctr.ID)
		return err
	}
	lctx, quit := context.WithCancel(context.Background())
	go func() { defer logf.Close(); _ = p.eng.FollowLogs(lctx, ctr.ID, logf) }()
	done := make(chan struct{})
	exited := p.eng.Wait(lctx, ctr.ID)
	go func() { <-exited; close(done) }()
	p.mu.Lock()
	p.ctr, p.quit = ctr, quit
	p.mu.Unlock()
	c.done = done
	return nil
}

// started says whether a container was started and not stopped since.
func (p *pgImage) started() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ctr != nil
}

// pid is the containerised postmaster's pid on the host (0: not running).
func (p *pgImage) pid() int {
	p.mu.Lock()
	ctr := p.ctr
	p.mu.Unlock()
	if ctr == nil {
		return 0
	}
	return kit.RunningPid(p.eng, ctr.ID)
}

// stop shuts the postmaster down fast (SIGINT), waits for it (done), then
// removes the container; the data dir stays.
func (p *pgImage) stop(done <-chan struct{}) {
	p.mu.Lock()
	ctr, quit := p.ctr, p.quit
	p.ctr, p.quit = nil, nil
	p.mu.Unlock()
	if ctr == nil {
		return
	}
	ctx := context.Background()
	_ = p.eng.Kill(ctx, ctr.ID, "SIGINT")
	select {
	case <-done:
	case <-time.After(20 * time.Second):
	}
	_ = p.eng.Remove(ctx, ctr.ID)
	if quit != nil {
		quit()
	}
}

// describe is the provenance line of the container.
func (p *pgImage) describe(l cgroup.Limits) string {
	p.mu.Lock()
	ctr := p.ctr
	p.mu.Unlock()
	s := "postgres in container: image " + p.image + " " + p.digest
	if ctr == nil {
		s += " (stopped)"
	}
	if !l.Zero() {
		s += "; " + l.String()
	}
	return s + "; " + p.eng.Describe()
}

// cgroup is the container's cgroup (nil: not running).
func (p *pgImage) cgroup() *cgroup.Group {
	if pid := p.pid(); pid > 0 {
		g, _ := cgroup.FromPid(pid)
		return g
	}
	return nil
}

func (p *pgImage) ref() string { return p.image }

// addInput records the image, by its content id, and the container.
func (p *pgImage) addInput(th *starlark.Thread, name string, l cgroup.Limits) {
	kit.AddImageInput(th, p.image, p.digest)
	runtime.AddInput(th, runtime.Input{Kind: "server", Name: name + ": " + p.describe(l)})
}

// close ends the engine's client: with the handle, not with a restart's
// stop.
func (p *pgImage) close() { p.eng.Close() }

// cgroup is the cluster's cgroup for observers (nil: none, or attached).
func (h *Handle) cgroup() *cgroup.Group {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.c == nil {
		return nil
	}
	return h.c.cgroup()
}

// watch guards the postmaster's container through a run: its exit, an
// OOM kill (the engine's or its cgroup's), a restart.
func (p *pgImage) watch(ctx context.Context, t0 time.Time, c *cluster) (ended, ooms func() []guard.Trip) {
	p.mu.Lock()
	ctr := p.ctr
	p.mu.Unlock()
	if ctr == nil {
		return guard.NotRunning("postgres in container"), nil
	}
	src := fmt.Sprintf("postgres (container %s)", ctr.Name)
	return kit.WatchContainer(ctx, &kit.ContainerWatch{Eng: p.eng, ID: ctr.ID, Src: src, T0: t0, Limits: c.limits,
		ByUs: func() bool { return !p.started() }}), nil
}

// binaries names the image by its digest.
func (p *pgImage) binaries() string { return "image " + p.image + " " + p.digest }
