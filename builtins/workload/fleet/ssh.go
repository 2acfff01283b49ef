package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/benchbook/benchbook/builtins/internal/child"
	"github.com/benchbook/benchbook/runtime/filehash"
)

// SSH starts agents through the system's OpenSSH client, so ~/.ssh/config
// (hosts, users, keys, jump hosts) applies as it does to the user's own ssh.
// Each host gets this benchbook binary, copied when the remote one is
// missing or a different build (checked by SHA-256). A remote agent dies
// with its session: it stops when its stdin closes, which sshd does when
// the client goes, and when it hears nothing from us for Spec.Silence.
type SSH struct {
	Hosts []string // "user@host" or a Host of ~/.ssh/config; one agent each
	// Command is the client and the options before the host; default
	// ssh -o BatchMode=yes (never prompt: a fleet has no one to answer).
	Command []string
	Binary  string // the benchbook to copy (default: this one)
	// Dir holds copied binaries on the remote side (default
	// .cache/benchbook/agent under the remote home).
	Dir string
	noClose
}

// remoteDir holds copied binaries, relative to the remote home.
const remoteDir = ".cache/benchbook/agent"

// Launch copies the binary where needed and starts one agent per host.
func (s *SSH) Launch(ctx context.Context, specs []Spec) ([]*Agent, error) {
	if len(specs) != len(s.Hosts) {
		return nil, fmt.Errorf("ssh agents: %d specs for %d hosts", len(specs), len(s.Hosts))
	}
	bin, sum, err := s.binary()
	if err != nil {
		return nil, err
	}
	dir := s.Dir
	if dir == "" {
		dir = remoteDir
	}
	path := dir + "/benchbook-" + sum[:16]
	if !strings.HasPrefix(path, "/") {
		path = "./" + path
	}
	checked := map[string]bool{}
	var agents []*Agent
	for i, host := range s.Hosts {
		if !checked[host] {
			if err := s.install(ctx, host, bin, sum, dir, path); err != nil {
				killAgents(agents)
				return nil, fmt.Errorf("ssh agent %s: %w", host, err)
			}
			checked[host] = true
		}
		cmd := s.ssh(host, "exec "+path+" agent")
		a, err := startProc(fmt.Sprintf("ssh/%d/%s", i, host), cmd, classifySSH)
		if err != nil {
			killAgents(agents)
			return nil, fmt.Errorf("ssh agent %s: %w", host, err)
		}
		agents = append(agents, a)
	}
	return agents, nil
}

func (s *SSH) ssh(host, remote string) *exec.Cmd {
	argv := s.Command
	if len(argv) == 0 {
		argv = []string{"ssh", "-o", "BatchMode=yes"}
	}
	args := append(append(append([]string(nil), argv[1:]...), "--", host), remote)
	return exec.Command(argv[0], args...)
}

func (s *SSH) binary() (path, sum string, err error) {
	path = s.Binary
	if path == "" {
		if path, err = os.Executable(); err != nil {
			return "", "", fmt.Errorf("ssh agents: %w", err)
		}
	}
	if sum, err = filehash.SHA256(path); err != nil {
		return "", "", fmt.Errorf("ssh agents: %w", err)
	}
	return path, sum, nil
}

// install checks the remote system and binary, and copies ours when the
// remote one is missing or differs.
func (s *SSH) install(ctx context.Context, host, bin, sum, dir, path string) error {
	out, err := s.output(ctx, host, "uname -sm; sha256sum "+path+" 2>/dev/null || true", nil)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if want := goSystem(); !strings.EqualFold(strings.TrimSpace(lines[0]), want) {
		return fmt.Errorf("it runs %q, this benchbook is built for %q: build one for it (GOOS/GOARCH) and pass it as binary", lines[0], want)
	}
	if len(lines) > 1 && strings.HasPrefix(lines[1], sum+" ") {
		return nil
	}
	f, err := os.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	tmp := path + ".tmp.$$"
	_, err = s.output(ctx, host, "mkdir -p "+dir+" && cat > "+tmp+" && chmod 755 "+tmp+" && mv -f "+tmp+" "+path, f)
	if err != nil {
		return fmt.Errorf("copy benchbook: %w", err)
	}
	return nil
}

// goSystem is what `uname -sm` prints on a machine this binary runs on.
func goSystem() string {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "i686"}[runtime.GOARCH]
	if arch == "" {
		arch = runtime.GOARCH
	}
	return strings.ToUpper(runtime.GOOS[:1]) + runtime.GOOS[1:] + " " + arch
}

// output runs one short remote command and returns its stdout.
func (s *SSH) output(ctx context.Context, host, remote string, stdin io.Reader) (string, error) {
	cmd := s.ssh(host, remote)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, &stderr
	if err := child.Start(cmd); err != nil {
		return "", err
	}
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	stop()
	if err != nil {
		return "", classifySSH(err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// classifySSH: OpenSSH exits 255 when the connection failed or broke, and
// with the remote command's status otherwise.
func classifySSH(err error, stderr string) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 255 {
		detail := lastLine(stderr)
		if detail == "" {
			detail = "ssh exited 255"
		}
		return &LostError{Detail: detail}
	}
	if stderr != "" {
		return fmt.Errorf("%w: %s", err, lastLine(stderr))
	}
	return err
}
