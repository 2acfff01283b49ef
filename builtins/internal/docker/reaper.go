package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/child"
)

// A container is no child of benchbook: the engine's shim runs it, so
// neither the parent-death signal nor child's supervisor reaches it. The
// reaper does: this binary re-executed in a hidden mode, in a process group
// of its own and without child's marker (so child's supervisor spares it),
// holding the read end of a pipe that only benchbook writes to. When
// benchbook dies, however it dies, the pipe closes; the reaper removes
// every container labelled with benchbook's token, then exits.

// Reaper is the hidden mode of the reaper ("__reap_containers TOKEN").
var Reaper = child.Mode{Arg: "__reap_containers", Run: func(args []string) {
	if len(args) == 0 {
		os.Exit(2)
	}
	reap(args[0]) // never returns
}}

var (
	reaperOnce  sync.Once
	reaperToken string
	reaperPipe  *os.File // write end, never written; closed by our death
	reaperErr   error
)

// startReaper starts the reaper once and returns the owner token that
// containers must carry in LabelOwner.
func startReaper() (string, error) {
	reaperOnce.Do(func() {
		var b [8]byte
		_, _ = rand.Read(b[:])
		reaperToken = strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
		reaperPipe, reaperErr = spawnReaper(reaperToken)
	})
	return reaperToken, reaperErr
}

func spawnReaper(token string) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd, err := child.ModeCommand(Reaper.Arg, token)
	if err != nil {
		w.Close()
		return nil, err
	}
	cmd.Stdin = r
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, err
	}
	go func() { _ = cmd.Wait() }()
	return w, nil
}

// reap waits for benchbook's end, then removes its containers.
func reap(token string) {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	_, _ = io.Copy(io.Discard, os.Stdin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := Connect(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchbook reaper:", err)
		os.Exit(1)
	}
	if _, err := e.removeOwned(ctx, token); err != nil {
		fmt.Fprintln(os.Stderr, "benchbook reaper:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// removeOwned removes every container of one owner.
func (e *Engine) removeOwned(ctx context.Context, token string) ([]string, error) {
	list, err := e.owned(ctx, token)
	if err != nil {
		return nil, err
	}
	var gone []string
	for _, c := range list {
		if err := e.Remove(ctx, c.ID); err != nil {
			return gone, err
		}
		gone = append(gone, c.ID)
	}
	return gone, nil
}

// Sweep removes the containers of benchbooks that are gone (their pid no
// longer runs) — what a reaper could not remove, say after a reboot of the
// engine's host or a SIGKILL of the reaper too. It returns their names.
// It is benchbook clean's: containers of an older benchbook, without the
// labels ownerGone needs, go when their pid does not run.
func (e *Engine) Sweep(ctx context.Context) ([]string, error) {
	return e.sweep(ctx, func(l map[string]string) bool {
		if l[LabelHost] != "" {
			return ownerGone(l)
		}
		return !ownerAlive(l[LabelPid], l[LabelOwner])
	})
}

// SweepDead removes the containers whose owner is gone for sure
// (ownerGone): what a benchbook killed together with its reaper left (a CI
// job's cgroup kill), removed by the next run of any notebook. Other
// benchbooks and tests run containers on the same engine at the same
// time: one whose owner may be alive is never touched.
func (e *Engine) SweepDead(ctx context.Context) ([]string, error) {
	return e.sweep(ctx, ownerGone)
}

func (e *Engine) sweep(ctx context.Context, gone func(map[string]string) bool) ([]string, error) {
	list, err := e.owned(ctx, "")
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, c := range list {
		if !gone(c.Labels) {
			continue
		}
		if err := e.Remove(ctx, c.ID); err != nil {
			return removed, err
		}
		name := c.ID[:min(12, len(c.ID))]
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		removed = append(removed, name)
	}
	return removed, nil
}

// ownerAlive says whether the benchbook that labelled a container runs:
// its pid lives and is the pid the token names (a reused pid is not it,
// but a live process with that pid is given the benefit of the doubt).
func ownerAlive(pidLabel, token string) bool {
	pid, err := strconv.Atoi(pidLabel)
	if err != nil || pid <= 0 || !strings.HasPrefix(token, pidLabel+"-") {
		return false
	}
	return syscall.Kill(pid, 0) != syscall.ESRCH
}
