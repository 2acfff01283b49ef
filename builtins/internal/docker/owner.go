package docker

import (
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/benchbook/benchbook/runtime/procfs"
)

// Labels that let a later benchbook tell, for sure, that a container's
// owner is gone: the owner's start time (a pid reused by another process
// is not the owner), and where that pid means something: the kernel's boot
// and the pid namespace it was counted in. Without them a pid of another
// machine (an engine several hosts share) or of a benchbook inside a
// container could be taken for a gone local process.
const (
	LabelStart = "benchbook.start" // the owner's start time, in clock ticks since boot (/proc/PID/stat)
	LabelHost  = "benchbook.host"  // boot id and pid namespace of the owner's pid
)

var (
	selfOnce sync.Once
	selfHost string
	selfTick string
)

// ownerLabels are this process's LabelStart and LabelHost ("" when /proc
// does not say).
func ownerLabels() (start, host string) {
	selfOnce.Do(func() {
		selfHost = hostIdentity()
		selfTick = startTicks(os.Getpid())
	})
	return selfTick, selfHost
}

func hostIdentity() string {
	boot, err := procfs.Sysctl("kernel.random.boot_id")
	if err != nil {
		return ""
	}
	ns, err := procfs.PidNamespaceLink()
	if err != nil {
		return ""
	}
	return boot + " " + ns
}

// startTicks is the start time of pid (field 22 of /proc/PID/stat), ""
// when there is no such process.
func startTicks(pid int) string {
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return ""
	}
	return strconv.FormatUint(st.StartTime, 10)
}

// ownerGone says, for sure, that the benchbook that labelled a container
// has ended: it was counted in this boot and pid namespace, and its pid
// runs no more, is a zombie, or is another process (another start time).
// Anything unsure (labels of an older benchbook, of another host or
// namespace, a /proc that cannot be read) is not gone: the next run must
// never remove a container whose owner is alive.
func ownerGone(labels map[string]string) bool {
	start, host := ownerLabels()
	if host == "" || labels[LabelHost] != host || labels[LabelStart] == "" || start == "" {
		return false
	}
	pidLabel := labels[LabelPid]
	pid, err := strconv.Atoi(pidLabel)
	if err != nil || pid <= 0 || !strings.HasPrefix(labels[LabelOwner], pidLabel+"-") {
		return false
	}
	st, err := procfs.ReadStat(pid)
	if os.IsNotExist(err) {
		return true
	}
	if err != nil {
		return false
	}
	return st.Dead() || strconv.FormatUint(st.StartTime, 10) != labels[LabelStart]
}
