package fleettest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// SSHD starts a private sshd for a test: listening on addr, with a
// temporary host key and user key, under the command prefix server (e.g.
// ip netns exec NS); it returns the ssh client command (under prefix
// clientPrefix) that logs in as root with the user key, and sshd's pid.
// It skips the test without /usr/sbin/sshd or root.
func SSHD(t *testing.T, addr string, server, clientPrefix []string) (client []string, sshdPid int) {
	t.Helper()
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		t.Skip("no /usr/sbin/sshd: apt-get install openssh-server openssh-client")
	}
	if os.Geteuid() != 0 {
		t.Skip("the private sshd logs in as root: run as root")
	}
	dir := t.TempDir()
	for _, k := range []string{"host", "user"} {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, k)).CombinedOutput()
		if err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
	}
	pub, _ := os.ReadFile(filepath.Join(dir, "user.pub"))
	_ = os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600)
	port := freePort(t)
	conf := fmt.Sprintf("Port %d\nListenAddress %s\nHostKey %s/host\nAuthorizedKeysFile %s/authorized_keys\n"+
		"PasswordAuthentication no\nPermitRootLogin prohibit-password\nStrictModes no\nPidFile %s/sshd.pid\nUsePAM no\n",
		port, addr, dir, dir, dir)
	_ = os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(conf), 0o600)
	_ = os.MkdirAll("/run/sshd", 0o755)
	argv := append(append([]string(nil), server...), "/usr/sbin/sshd", "-D", "-f", filepath.Join(dir, "sshd_config"), "-E", filepath.Join(dir, "sshd.log"))
	sshd := exec.Command(argv[0], argv[1:]...)
	if err := sshd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sshd.Process.Kill(); _ = sshd.Wait() })
	waitPort(t, clientPrefix, addr, port)
	return append(append([]string(nil), clientPrefix...), "ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
		"-o", "LogLevel=ERROR", "-i", filepath.Join(dir, "user"), "-p", strconv.Itoa(port)), sshd.Process.Pid
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitPort(t *testing.T, prefix []string, addr string, port int) {
	for range 100 {
		// bash's /dev/tcp, run where the client runs (maybe another namespace).
		argv := append(append([]string(nil), prefix...), "bash", "-c", fmt.Sprintf("exec 3<>/dev/tcp/%s/%d", addr, port))
		if exec.Command(argv[0], argv[1:]...).Run() == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("sshd did not listen")
}
