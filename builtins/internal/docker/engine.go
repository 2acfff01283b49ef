// Package docker runs benchbook's containers through the Docker Engine API.
//
// It speaks to the engine's socket (DOCKER_HOST, else
// /var/run/docker.sock; Podman's Docker-compatible socket answers the same
// API). The client is the moby project's client module, which negotiates
// the API version down to the engine's (1.41 for Debian's docker.io 20.10;
// it speaks nothing older than 1.40).
//
// Every container benchbook starts is labelled with its owner (this
// process's token and pid), runs with host networking unless told
// otherwise, and is removed: by its owner when done, by a reaper process
// when the owner dies however it dies (reaper.go), and by Sweep (benchbook
// clean) when both are gone.
package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/benchbook/benchbook/builtins/internal/cgroup"
)

// Labels every container of benchbook carries.
const (
	LabelOwner = "benchbook.owner" // the owning benchbook's token
	LabelPid   = "benchbook.pid"   // the owning benchbook's pid, for Sweep
)

// Engine is a connection to a container engine.
type Engine struct {
	cli        *client.Client
	Name       string // "Docker Engine - Community", "Podman Engine", or the platform name
	Version    string // the engine's version, "20.10.24+dfsg1"
	APIVersion string // the API version negotiated, "1.41"
	Host       string // where it listens, "unix:///var/run/docker.sock"
}

// Connect reaches the engine named by DOCKER_HOST (or the default socket)
// and asks its version.
func Connect(ctx context.Context) (*Engine, error) {
	cli, err := client.New(client.FromEnv) // negotiates the API version on its first request
	if err != nil {
		return nil, fmt.Errorf("container engine: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := cli.ServerVersion(cctx, client.ServerVersionOptions{})
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("no container engine at %s (start dockerd, or set DOCKER_HOST to Podman's socket): %w", cli.DaemonHost(), err)
	}
	e := &Engine{cli: cli, Version: v.Version, APIVersion: cli.ClientVersion(), Host: cli.DaemonHost()}
	e.Name = v.Platform.Name
	for _, c := range v.Components {
		if c.Name == "Podman Engine" {
			e.Name = c.Name
		}
	}
	if e.Name == "" {
		e.Name = "Docker Engine"
	}
	return e, nil
}

// Close releases the client's connections.
func (e *Engine) Close() error { return e.cli.Close() }

// Describe is "Docker Engine 20.10.24+dfsg1 (API 1.41)".
func (e *Engine) Describe() string {
	return fmt.Sprintf("%s %s (API %s)", e.Name, e.Version, e.APIVersion)
}

// Spec says what to run.
type Spec struct {
	Image   string
	Entry   []string          // replaces the image's entrypoint; empty keeps it
	Cmd     []string          // replaces the image's command (not its entrypoint); empty keeps it
	Env     []string          // NAME=value
	Limits  cgroup.Limits     // CPU quota, cpuset, memory (swap off), pids
	Volumes map[string]string // host path -> container path (bind mounts)
	Name    string            // the container's name; "" lets the engine pick
	User    string            // uid[:gid] to run as; "" is the image's
	Network string            // "host" unless set
	HostPID bool              // share the host's pid namespace: pids inside are the host's
	Restart string            // the engine's restart policy: "no" (""), "on-failure", "always", "unless-stopped"
}

// Container is one started container.
type Container struct {
	ID     string
	Name   string
	Image  string // as asked
	Digest string // the image's id (sha256:...) and repo digest when it has one
}

// ImageDigest is the image's content id, and its registry digest when it
// came from a registry: what the record names.
func (e *Engine) ImageDigest(ctx context.Context, ref string) (string, error) {
	img, err := e.cli.ImageInspect(ctx, ref)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return "", fmt.Errorf("image %q is not on this engine (no registry is asked: docker pull, load or import it first)", ref)
		}
		return "", fmt.Errorf("image %q: %w", ref, err)
	}
	d := img.ID
	if len(img.RepoDigests) > 0 {
		d += " (" + img.RepoDigests[0] + ")"
	}
	return d, nil
}

// ImageID is the content id of a Digest ("sha256:..."), which names the
// image whatever its tags say later.
func ImageID(digest string) string {
	id, _, _ := strings.Cut(digest, " ")
	return id
}

// Run creates and starts a container. It is labelled with this process's
// ownership and the reaper watches it from creation on; on any error
// nothing is left behind.
func (e *Engine) Run(ctx context.Context, s Spec) (*Container, error) {
	digest, err := e.ImageDigest(ctx, s.Image)
	if err != nil {
		return nil, err
	}
	token, err := startReaper()
	if err != nil {
		return nil, fmt.Errorf("reaper: %w", err)
	}
	cfg, host := configs(s, token)
	cfg.Image = ImageID(digest) // what the record names, even if the tag moves on meanwhile
	created, err := e.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: host, Name: s.Name})
	if err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	c := &Container{ID: created.ID, Name: s.Name, Image: s.Image, Digest: digest}
	if _, err := e.cli.ContainerStart(ctx, c.ID, client.ContainerStartOptions{}); err != nil {
		_ = e.Remove(context.WithoutCancel(ctx), c.ID)
		return nil, fmt.Errorf("start: %w", err)
	}
	if c.Name == "" {
		if st, err := e.cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{}); err == nil {
			c.Name = strings.TrimPrefix(st.Container.Name, "/")
		}
	}
	return c, nil
}

// configs turns a Spec into the engine's create request.
func configs(s Spec, token string) (*container.Config, *container.HostConfig) {
	start, hostID := ownerLabels()
	cfg := &container.Config{
		Image: s.Image, Env: s.Env, User: s.User,
		Labels: map[string]string{LabelOwner: token, LabelPid: strconv.Itoa(os.Getpid()), LabelStart: start, LabelHost: hostID},
	}
	if len(s.Cmd) > 0 {
		cfg.Cmd = s.Cmd
	}
	if len(s.Entry) > 0 {
		cfg.Entrypoint = s.Entry
	}
	net := s.Network
	if net == "" {
		net = "host"
	}
	host := &container.HostConfig{NetworkMode: container.NetworkMode(net)}
	if s.HostPID {
		host.PidMode = "host"
	}
	if s.Restart != "" {
		host.RestartPolicy = container.RestartPolicy{Name: container.RestartPolicyMode(s.Restart)}
	}
	l := s.Limits
	host.NanoCPUs = int64(l.CPUs * 1e9)
	host.CpusetCpus = l.Cpuset
	if l.Memory > 0 {
		host.Memory, host.MemorySwap = l.Memory, l.Memory // swap off: memory + swap = memory
		zero := int64(0)
		host.MemorySwappiness = &zero
	}
	if l.Pids > 0 {
		host.PidsLimit = &l.Pids
	}
	for from, to := range s.Volumes {
		host.Binds = append(host.Binds, from+":"+to)
	}
	return cfg, host
}

// State is what the engine says of a container now.
type State struct {
	Running      bool
	Pid          int // its init's pid on the host, 0 when not running
	ExitCode     int
	OOMKilled    bool   // the engine's own record of an OOM kill
	RestartCount int    // restarts by the engine's restart policy
	StartedAt    string // changes when it restarts
	Status       string // "running", "exited", ...
	Error        string
}

// Inspect asks the engine about a container.
func (e *Engine) Inspect(ctx context.Context, id string) (State, error) {
	res, err := e.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return State{}, err
	}
	st := res.Container
	if st.State == nil {
		return State{}, errors.New("engine gave no state")
	}
	s := st.State
	return State{Running: s.Running, Pid: s.Pid, ExitCode: s.ExitCode, OOMKilled: s.OOMKilled,
		RestartCount: st.RestartCount, StartedAt: s.StartedAt, Status: string(s.Status), Error: s.Error}, nil
}

// Settle asks again, for up to 2 s, about a container that ended by
// SIGKILL (exit code 137) without the OOM flag: the engine may handle the
// kernel's OOM event after the exit. Any other state comes back as it is.
func (e *Engine) Settle(ctx context.Context, id string, st State) State {
	if st.Running || st.ExitCode != 137 || st.OOMKilled {
		return st
	}
	for range 20 {
		time.Sleep(100 * time.Millisecond)
		if again, err := e.Inspect(ctx, id); err == nil {
			st = again
			if st.OOMKilled {
				break
			}
		}
	}
	return st
}

// Remove kills and removes a container with its anonymous volumes; a
// container already gone is no error.
func (e *Engine) Remove(ctx context.Context, id string) error {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := e.cli.ContainerRemove(cctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return err
	}
	return nil
}

// Stop asks a container to stop (SIGTERM, SIGKILL after grace); it stays,
// to be started again by Start.
func (e *Engine) Stop(ctx context.Context, id string, grace time.Duration) error {
	secs := int(grace.Seconds())
	_, err := e.cli.ContainerStop(ctx, id, client.ContainerStopOptions{Timeout: &secs})
	return err
}

// Start starts a stopped container again.
func (e *Engine) Start(ctx context.Context, id string) error {
	_, err := e.cli.ContainerStart(ctx, id, client.ContainerStartOptions{})
	return err
}

// FollowLogs copies the container's output (stdout and stderr) to w from
// now until the container stops or ctx ends.
func (e *Engine) FollowLogs(ctx context.Context, id string, w io.Writer) error {
	rc, err := e.cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Follow: true})
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = stdcopy.StdCopy(w, w, rc)
	return err
}

// owned lists benchbook's containers, those of one owner when token != "".
func (e *Engine) owned(ctx context.Context, token string) ([]container.Summary, error) {
	label := LabelOwner
	if token != "" {
		label += "=" + token
	}
	res, err := e.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", label)})
	return res.Items, err
}

// Import makes image ref from a tar of its files (docker import), with
// Dockerfile changes such as `ENTRYPOINT ["/tool"]`: how images are made
// here without a registry. The image ref named before is removed when
// nothing else names or uses it, so rebuilding leaves no nameless images.
func (e *Engine) Import(ctx context.Context, tarball io.Reader, ref string, changes []string) error {
	var before string
	if img, err := e.cli.ImageInspect(ctx, ref); err == nil {
		before = img.ID
	}
	rc, err := e.cli.ImageImport(ctx, client.ImageImportSource{Source: tarball, SourceName: "-"}, ref, client.ImageImportOptions{Changes: changes})
	if err != nil {
		return fmt.Errorf("import %s: %w", ref, err)
	}
	defer rc.Close()
	out, _ := io.ReadAll(rc)
	if bytes.Contains(out, []byte(`"errorDetail"`)) {
		return fmt.Errorf("import %s: %s", ref, out)
	}
	if img, err := e.cli.ImageInspect(ctx, ref); err == nil && before != "" && img.ID != before {
		// Refused while a container or another name uses it: then it stays.
		e.RemoveImage(ctx, before) //nolint:errcheck
	}
	return nil
}

// RemoveImage removes an image by id or ref; the engine refuses while a
// container or another name uses it.
func (e *Engine) RemoveImage(ctx context.Context, ref string) error {
	_, err := e.cli.ImageRemove(ctx, ref, client.ImageRemoveOptions{})
	return err
}

// Kill sends a signal ("SIGINT") to the container's init.
func (e *Engine) Kill(ctx context.Context, id, signal string) error {
	_, err := e.cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: signal})
	return err
}

// Wait returns a channel that gets the container's exit code when it stops
// (-1 when the engine cannot say), and is closed after.
func (e *Engine) Wait(ctx context.Context, id string) <-chan int {
	out := make(chan int, 1)
	w := e.cli.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	res, errs := w.Result, w.Error
	go func() {
		defer close(out)
		select {
		case r := <-res:
			out <- int(r.StatusCode)
		case <-errs:
			out <- -1
		}
	}()
	return out
}
