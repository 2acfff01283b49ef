package docker

import (
	"context"
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/benchbook/benchbook/runtime/procfs"
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
	imgs, err := e.cli.ImageList(ctx, client.ImageListOptions{})
	if err != nil || len(imgs.Items) == 0 {
		t.Skip("no image on the engine")
	}
	img := imgs.Items[0].ID
	mk := func(pid, token string) string {
		cfg, host := configs(Spec{Image: img, Cmd: []string{"x"}}, token)
		cfg.Labels[LabelPid] = pid
		c, err := e.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: host})
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
	if _, err := e.cli.ContainerInspect(ctx, dead, client.ContainerInspectOptions{}); err == nil {
		t.Errorf("the orphan %s survived the sweep (swept %v)", dead[:12], gone)
	}
	if _, err := e.cli.ContainerInspect(ctx, live, client.ContainerInspectOptions{}); err != nil {
		t.Errorf("the live benchbook's container was swept: %v", err)
	}
	if !slices.ContainsFunc(gone, func(s string) bool { return s != "" }) {
		t.Errorf("Sweep said it removed nothing")
	}
}

// TestOwnerGone: an owner is gone only for sure: its pid does not run, is
// a zombie, or runs another process (another start time), in this boot
// and pid namespace. A live owner, labels of another host or namespace and
// the labels of an older benchbook are not.
func TestOwnerGone(t *testing.T) {
	start, host := ownerLabels()
	if host == "" || start == "" {
		t.Skip("no /proc to tell owners by")
	}
	me := strconv.Itoa(os.Getpid())
	labels := func(pid, st, h string) map[string]string {
		return map[string]string{LabelOwner: pid + "-x", LabelPid: pid, LabelStart: st, LabelHost: h}
	}
	// A zombie: a child that exited, not waited for yet.
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	zstart := ""
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if st, err := procfs.ReadStat(pid); err == nil && st.State == 'Z' {
			zstart = strconv.FormatUint(st.StartTime, 10)
			break
		}
	}
	defer syscall.Wait4(pid, nil, 0, nil)
	if zstart == "" {
		t.Fatal("the child never became a zombie")
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		gone   bool
	}{
		{"this live process", labels(me, start, host), false},
		{"this pid, another start", labels(me, start+"1", host), true},
		{"a pid that does not run", labels("2147483000", "1", host), true},
		{"a zombie", labels(strconv.Itoa(pid), zstart, host), true},
		{"another boot or namespace", labels("2147483000", "1", "other "+host), false},
		{"an older benchbook's labels", map[string]string{LabelOwner: "2147483000-x", LabelPid: "2147483000"}, false},
		{"a token that is not the pid's", map[string]string{LabelOwner: "1-x", LabelPid: "2147483000", LabelStart: "1", LabelHost: host}, false},
	} {
		if got := ownerGone(tc.labels); got != tc.gone {
			t.Errorf("%s: gone = %v, want %v", tc.name, got, tc.gone)
		}
	}
}
