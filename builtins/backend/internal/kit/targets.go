package kit

import (
	"net/url"
	"strconv"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/runtime"
)

// Every process, container and cluster a notebook starts is a guard.Target:
// every measured run watches it, observed or not (see guard/targets.go),
// and the one the run sends traffic to is found by Serves.

// AddTarget registers t with the session's run guards.
func AddTarget(th *starlark.Thread, t guard.Target) {
	runtime.SessionValue(th, guard.TargetsKey, guard.NewTargets).Add(t)
}

// ReadyPort is the port a ready check names ("http://127.0.0.1:8080/x",
// "tcp:5432"), 0 for none.
func ReadyPort(ready string) int {
	if p, ok := strings.CutPrefix(ready, "tcp:"); ok {
		n, _ := strconv.Atoi(p)
		return n
	}
	u, err := url.Parse(ready)
	if err != nil || u.Host == "" {
		return 0
	}
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		return n
	}
	return map[string]int{"http": 80, "https": 443}[u.Scheme]
}

// ReadyURL is the scheme and host of an HTTP ready check
// ("http://127.0.0.1:8080" for ready = "http://127.0.0.1:8080/health"), so
// a workload can aim at a target as it does at backend.demo; None for
// other ready checks.
func ReadyURL(ready string) starlark.Value {
	u, err := url.Parse(ready)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return starlark.None
	}
	return starlark.String(u.Scheme + "://" + u.Host)
}
