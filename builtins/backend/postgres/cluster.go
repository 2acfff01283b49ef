package postgres

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/runtime/limits"
)

// cluster is a PostgreSQL cluster of benchbook's own: a data directory under
// a resource dir (which keeps it across runs) and, while it runs, a
// postmaster in a process group that dies with benchbook.
//
// Layout of root: data/ (PGDATA), generation (id written at initdb, the
// cache input), postgres.log, snapshots/<name>/, s/ (the socket dir, unless
// root's path is too long for a unix socket).
type cluster struct {
	root     string
	as       *account
	settings map[string]string // the user's settings, as written in postgresql.conf

	port    int
	sockDir string
	done    chan struct{} // closed when the running postmaster exits

	limits cgroup.Limits // cpus, memory, cpuset, pids (kit.LimitArgs)
	host   pgHost        // the host side (host.go), when img is nil
	img    *pgImage      // the container side, nil on the host (image.go)
}

// readyTimeout bounds how long a start may take before it counts as failed.
const readyTimeout = 60 * time.Second

func (c *cluster) dataDir() string { return filepath.Join(c.root, "data") }
func (c *cluster) logPath() string { return filepath.Join(c.root, "postgres.log") }

// generationFile holds the id of the data dir's current incarnation.
const generationFile = "generation"

// readGeneration is the checker of "resource" inputs: the id written when
// the data dir was created; "" (stale) when it is gone.
func readGeneration(root string) (string, error) {
	data, err := limits.ReadFile(filepath.Join(root, generationFile), limits.File)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	return strings.TrimSpace(string(data)), err
}

// ensure creates the cluster with initdb unless its data is already there.
// It reports whether it created it.
func (c *cluster) ensure(ctx context.Context) (bool, error) {
	if err := recoverCopy(c.dataDir()); err != nil { // a restore a kill cut short
		return false, err
	}
	if _, err := os.Stat(filepath.Join(c.dataDir(), "PG_VERSION")); err == nil {
		if g, _ := readGeneration(c.root); g != "" {
			return false, nil
		}
	}
	if err := os.RemoveAll(c.dataDir()); err != nil {
		return false, err
	}
	_ = os.Remove(filepath.Join(c.root, generationFile))
	if err := c.initdb(ctx); err != nil {
		return false, err
	}
	id := make([]byte, 12)
	_, _ = rand.Read(id)
	return true, kit.WriteOwn(filepath.Join(c.root, generationFile), []byte(hex.EncodeToString(id)+"\n"))
}

// initdb runs initdb as the unprivileged account, where the cluster is
// placed. Trust authentication is limited to the private socket and
// 127.0.0.1: DSNs carry no password. --no-sync only skips the flush of the
// fresh template files.
func (c *cluster) initdb(ctx context.Context) error {
	if err := c.at().initdb(ctx, c); err != nil {
		return err
	}
	conf := filepath.Join(c.dataDir(), "postgresql.conf")
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString("\n# benchbook: its settings, rewritten at every start\ninclude_if_exists = 'benchbook.conf'\n")
	return err
}

// makeDataDir makes the empty data dir, the account's, on a path it can
// open.
func (c *cluster) makeDataDir() error {
	if err := openPath(c.root, c.as); err != nil {
		return err
	}
	if err := os.MkdirAll(c.dataDir(), 0o700); err != nil {
		return err
	}
	return chownTree(c.dataDir(), c.as)
}

// confLines returns benchbook.conf: the user's settings, plus what
// observation needs where the user did not say otherwise. Durability
// settings (fsync, synchronous_commit, full_page_writes) keep PostgreSQL's
// defaults: a throwaway cluster must still measure what production does.
func (c *cluster) confLines() string {
	set := map[string]string{
		"pg_stat_statements.track_planning": "on",
		"pg_stat_statements.max":            "10000",
		"track_io_timing":                   "on",
		"logging_collector":                 "off",
	}
	for k, v := range c.settings {
		set[k] = v
	}
	libs := set["shared_preload_libraries"]
	if !strings.Contains(libs, "pg_stat_statements") {
		set["shared_preload_libraries"] = strings.TrimLeft(libs+",pg_stat_statements", ",")
	}
	// Never the user's: where it listens is benchbook's business, and a
	// failing statement's text stays out of the log the cache keeps (a
	// CREATE ROLE ... PASSWORD from pg.query, a workload, another client:
	// secret.go). The error line itself is still logged.
	set["log_min_error_statement"] = "panic"
	set["listen_addresses"] = "127.0.0.1"
	set["port"] = strconv.Itoa(c.port)
	set["unix_socket_directories"] = c.sockDir
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = '%s'\n", k, strings.ReplaceAll(set[k], "'", "''"))
	}
	return b.String()
}

// socketDir is a private directory for the unix socket; a short one under
// /tmp when root's path would exceed the 107-byte limit of socket paths.
func (c *cluster) socketDir() (string, error) {
	dir := filepath.Join(c.root, "s")
	if len(dir)+len("/.s.PGSQL.65535") > 107 {
		sum := sha256.Sum256([]byte(c.root))
		dir = filepath.Join(os.TempDir(), "bbpg-"+hex.EncodeToString(sum[:6]))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", err
	}
	return dir, chownTree(dir, c.as)
}

// pickPort keeps the cluster's previous port (in this run or, through the
// port file, the last one) when it is still free, so the DSN stays the same
// across restarts; otherwise it takes a new free port.
func (c *cluster) pickPort() (int, error) {
	file := filepath.Join(c.root, "port")
	prev := c.port
	if prev == 0 {
		data, _ := limits.ReadFile(file, limits.File)
		prev, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	}
	if prev > 0 && portFree(prev) {
		return prev, nil
	}
	port, err := freePort()
	if err != nil {
		return 0, err
	}
	return port, kit.WriteOwn(file, []byte(strconv.Itoa(port)+"\n"))
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs the postmaster and waits until it accepts connections. On
// failure the error carries PostgreSQL's own log lines. When another
// process bound the port between pickPort's look and the postmaster's own
// bind, the postmaster exits ("could not bind") and start tries again on a
// new port: pickPort keeps a port only while it is free.
func (c *cluster) start(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		err := c.startOn(ctx)
		if err == nil || attempt == 3 || ctx.Err() != nil || portFree(c.port) {
			return err
		}
	}
}

// testHookPortPicked, when set, runs after a start has picked its port and
// before the postmaster binds it.
var testHookPortPicked func(c *cluster)

// startOn is one try of start.
func (c *cluster) startOn(ctx context.Context) error {
	var err error
	if c.port, err = c.pickPort(); err != nil {
		return err
	}
	if testHookPortPicked != nil {
		testHookPortPicked(c)
	}
	if c.sockDir, err = c.socketDir(); err != nil {
		return err
	}
	if err := c.readyDataDir(); err != nil {
		return err
	}
	conf := filepath.Join(c.dataDir(), "benchbook.conf")
	if err := os.WriteFile(conf, []byte(c.confLines()), 0o644); err != nil {
		return err
	}
	if err := c.saveSettings(); err != nil {
		return err
	}
	if err := chownTree(conf, c.as); err != nil {
		return err
	}
	logf, err := openLog(c.logPath())
	if err != nil {
		return err
	}
	defer logf.Close()
	offset, _ := logf.Seek(0, 2)
	if err := c.at().start(ctx, c, logf); err != nil {
		return err
	}
	return c.readyOrStop(ctx, offset)
}

// readyOrStop waits until the server accepts connections, or stops it and
// returns its log lines since offset.
func (c *cluster) readyOrStop(ctx context.Context, offset int64) error {
	if err := c.waitReady(ctx); err != nil {
		c.stop()
		return fmt.Errorf("%w\npostgres log:\n%s", err, kit.Indent(c.logSince(offset, 20)))
	}
	return nil
}

// openLog opens the server's log for appending; O_NONBLOCK makes a FIFO
// put there an error (no reader) instead of an open that waits for one.
func openLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK, 0o644)
}

// logSince returns the last n lines the log got after offset.
func (c *cluster) logSince(offset int64, n int) []string {
	data, err := limits.ReadFile(c.logPath(), limits.Record)
	if err != nil || int64(len(data)) < offset {
		return nil
	}
	s := strings.TrimRight(string(data[offset:]), "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	return lines[max(0, len(lines)-n):]
}

// waitReady polls until the cluster's own server accepts connections, the
// postmaster exits, the timeout passes or ctx is cancelled. A connection
// alone proves nothing: the port was free when pickPort looked, and another
// server may have bound it since (a second cluster restarting, any process
// asking the kernel for a free port), in which case our postmaster exits
// with "could not bind" while that server answers. It counts as ours when
// it reports our socket directory, which no other cluster shares.
func (c *cluster) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		err := c.answersAsOurs(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-c.done:
			return fmt.Errorf("postgres exited while starting")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(25 * time.Millisecond): // a restore waits on this
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready after %s: %v", readyTimeout, err)
		}
	}
}

// answersAsOurs connects to the cluster's port and checks that the server
// there is this cluster's (its unix_socket_directories is c.sockDir).
func (c *cluster) answersAsOurs(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, c.dsn())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var dirs string
	if err := conn.QueryRow(cctx, "SELECT current_setting('unix_socket_directories')").Scan(&dirs); err != nil {
		return err
	}
	if dirs != c.sockDir {
		return fmt.Errorf("127.0.0.1:%d is another server's (its sockets are in %s)", c.port, dirs)
	}
	return nil
}

// portFree reports whether nothing listens on loopback port.
func portFree(port int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// stop shuts the postmaster down (fast shutdown: SIGINT), killing it if it
// takes too long. Safe to call when not running.
func (c *cluster) stop() {
	p := c.at()
	if !p.started() {
		return
	}
	p.stop(c.done)
	c.dropSocketDir()
	c.recordCheckpoint()
}

// dropSocketDir removes the short socket directory under /tmp, if the
// cluster needed one: nothing of a stopped cluster stays outside its root.
func (c *cluster) dropSocketDir() {
	if c.sockDir != "" && !strings.HasPrefix(c.sockDir, c.root+string(filepath.Separator)) {
		os.RemoveAll(c.sockDir)
	}
}

func (c *cluster) running() bool {
	if !c.at().started() {
		return false
	}
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

func (c *cluster) pid() int { return c.at().pid() }

// dsn has no password: authentication is trust on loopback.
func (c *cluster) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// readyDataDir puts right what a copy cut short may have left: a copy half
// made (recoverCopy), a data dir not owned by the account PostgreSQL runs
// as or open to others (postgres refuses both; a partial cp -a left it
// root's, 0700), and the lock files of a postmaster that is gone
// (clearStaleLocks). An image cluster's too: its postmaster runs in the
// host's pid namespace (imageSpec's HostPID), so its lock holds a host pid.
func (c *cluster) readyDataDir() error {
	if err := recoverCopy(c.dataDir()); err != nil {
		return err
	}
	st, err := os.Stat(c.dataDir())
	if err != nil {
		return err
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && c.as != nil && (sys.Uid != c.as.uid || sys.Gid != c.as.gid) {
		if err := os.Chown(c.dataDir(), int(c.as.uid), int(c.as.gid)); err != nil {
			return err
		}
	}
	if st.Mode().Perm() != 0o700 {
		if err := os.Chmod(c.dataDir(), 0o700); err != nil {
			return err
		}
	}
	c.clearStaleLocks()
	return nil
}

func (c *cluster) snapshotDir(name string) string {
	return filepath.Join(c.root, "snapshots", name)
}
