// Package pgtest starts throwaway PostgreSQL clusters for tests. It is the
// one way a test that needs a server of its own gets one (the product's own
// clusters come from backend.postgres, which tests exercise through
// notebooks). A cluster runs as the postgres user when the tests run as root
// (initdb and postgres refuse root), as the test's user otherwise, listens
// on a unix socket in its own directory (and on 127.0.0.1 with TLS when
// asked), and stops when the test ends, or with the test binary however it
// ends (Linux's parent-death signal).
package pgtest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// Options shape a cluster.
type Options struct {
	// TLS also listens on 127.0.0.1 with ssl = on (a self-signed
	// certificate made here); the DSN reaches it there with
	// sslmode=require.
	TLS bool
	// DataDir starts the server on an existing data directory (made by
	// initdb or by backend.postgres) instead of a fresh one.
	DataDir string
}

// Cluster is a running throwaway server.
type Cluster struct {
	DSN  string    // keyword/value form
	URL  string    // postgres:// form, over TCP on loopback
	Dir  string    // its socket directory (and data directory, unless Options.DataDir)
	Proc *exec.Cmd // the postmaster, for tests that stop or kill it
	Port int

	stopped bool
}

// Start starts a cluster for the test; it is stopped at the test's end.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	bin := needs.Postgres(t)
	attr, uid, gid := runAs(t)
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	data := o.DataDir
	if data == "" {
		data = filepath.Join(dir, "data")
		initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync")
		initdb.SysProcAttr = attr
		if out, err := initdb.CombinedOutput(); err != nil {
			t.Fatalf("initdb: %v\n%s", err, out)
		}
	}
	c := &Cluster{Dir: dir, Port: freePort(t)}
	args := []string{"-D", data, "-p", strconv.Itoa(c.Port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=50"}
	if o.TLS {
		cert, key := selfSigned(t, dir, uid, gid)
		args = append(args, "-c", "ssl=on", "-c", "ssl_cert_file="+cert, "-c", "ssl_key_file="+key)
	}
	c.Proc = exec.Command(filepath.Join(bin, "postgres"), args...)
	c.Proc.SysProcAttr = attr
	c.Proc.Stderr = logFile(t, dir)
	if err := c.Proc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.stop(syscall.SIGQUIT) })
	c.DSN = fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres", dir, c.Port)
	c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.Port)
	if o.TLS {
		c.DSN = fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=require", c.Port)
		c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=require", c.Port)
	}
	waitReady(t, c.DSN, filepath.Join(dir, "postgres.log"))
	return c
}

// Stop shuts the server down cleanly (a fast shutdown, with a
// checkpoint), for a test that hands its data directory on.
func (c *Cluster) Stop() { c.stop(syscall.SIGINT) }

// StopImmediate stops the server as pg_ctl stop -m immediate does (SIGQUIT):
// no shutdown checkpoint, the next start recovers from the WAL, as after a
// crash.
func (c *Cluster) StopImmediate() { c.stop(syscall.SIGQUIT) }

func (c *Cluster) stop(sig syscall.Signal) {
	if c.stopped {
		return
	}
	c.stopped = true
	_ = c.Proc.Process.Signal(sig)
	_ = c.Proc.Wait()
}

// Exec runs sql on the cluster.
func (c *Cluster) Exec(t testing.TB, sql string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), c.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
}

// runAs is the user the cluster runs as: postgres under root, else the
// test's own user.
func runAs(t testing.TB) (attr *syscall.SysProcAttr, uid, gid int) {
	if os.Getuid() != 0 {
		return procAttr(nil), os.Getuid(), os.Getgid()
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		needs.Missing(t, "a postgres user to run the throwaway cluster as", "apt-get install postgresql")
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return procAttr(&syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}), uid, gid
}

// logFile is where the server's log goes: a file in its directory, shown
// when it does not come up.
func logFile(t testing.TB, dir string) *os.File {
	f, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// selfSigned writes a certificate and key for 127.0.0.1 into dir, owned by
// the cluster's user (PostgreSQL refuses a key others can read).
func selfSigned(t testing.TB, dir string, uid, gid int) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	for f, b := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: kder}} {
		if err := os.WriteFile(f, pem.EncodeToMemory(b), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(f, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func waitReady(t testing.TB, dsn, log string) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err == nil {
			conn.Close(context.Background())
			return
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log)
			t.Fatalf("postgres not ready: %v\n%s", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
