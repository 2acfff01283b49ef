package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/benchbook/benchbook/builtins/internal/child"
)

// A host cluster's data dir starts as a copy of a pristine initdb kept in
// the user's cache, one per PostgreSQL installation and account: initdb
// costs ~1.4 s of CPU here (bootstrap, template1, template0, postgres), a
// copy of its ~40 MB a tenth of that. The first cluster of an installation
// runs initdb and keeps its output, before benchbook adds anything to it.
//
// A copy is the same bytes as another initdb with the same options but
// for pg_control's system identifier, which initdb draws from the clock:
// each copy gets one of its own (pg_control rewritten, then pg_resetwal,
// which writes the WAL anew under it), as state tracking tells clusters
// apart by it (holds). Anything that goes wrong on the way falls back to
// initdb itself.

// initdbArgs are initdb's options after -D (initdbOnHost).
var initdbArgs = []string{"-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"}

// templateDir is where the pristine initdb for initdb (a binary path) run
// as as lives: named by the installation's binaries (path, size, time),
// the account, the options and the time zone, so another PostgreSQL, a
// reinstalled one, another account or zone gets a template of its own. "" when there is no
// cache directory, the binaries cannot be read or pg_resetwal is not
// beside initdb.
func templateDir(initdb string, as *account) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "v1\n%s\n", strings.Join(initdbArgs, " "))
	bins := filepath.Dir(initdb)
	if _, err := os.Stat(filepath.Join(bins, "pg_resetwal")); err != nil {
		return "" // a copy could not get an identifier of its own
	}
	for _, bin := range []string{initdb, filepath.Join(bins, "postgres")} {
		fi, err := os.Stat(bin)
		if err != nil {
			return ""
		}
		fmt.Fprintf(h, "%s %d %d\n", bin, fi.Size(), fi.ModTime().UnixNano())
	}
	if as != nil {
		fmt.Fprintf(h, "as %d %d\n", as.uid, as.gid)
	}
	// initdb writes the time zone it finds (TZ, else /etc/localtime) into
	// postgresql.conf as timezone and log_timezone.
	localtime, _ := os.ReadFile("/etc/localtime")
	fmt.Fprintf(h, "TZ %q %x\n", os.Getenv("TZ"), sha256.Sum256(localtime))
	return filepath.Join(dir, "benchbook", "postgres-initdb", hex.EncodeToString(h.Sum(nil))[:16])
}

// initdbFromTemplate fills the (empty) data dir from the template, or runs
// initdb and keeps its output as the template.
func (c *cluster) initdbFromTemplate(ctx context.Context, initdb string) error {
	tpl := templateDir(initdb, c.as)
	if tpl != "" {
		if _, err := os.Stat(filepath.Join(tpl, "PG_VERSION")); err == nil {
			err := c.copyTemplate(ctx, tpl, initdb)
			if err == nil {
				return nil
			}
			if ctx.Err() != nil { // interrupted: the template is not at fault
				return err
			}
			os.RemoveAll(tpl) // the next initdb keeps a new one
			if err := c.emptyDataDir(); err != nil {
				return err
			}
		}
	}
	if err := c.initdbOnHost(ctx, initdb); err != nil {
		return err
	}
	if tpl != "" {
		keepTemplate(ctx, c.dataDir(), tpl) // a cache: failing to keep it costs the next cluster an initdb
	}
	return nil
}

// copyTemplate copies tpl into the data dir and gives the copy a system
// identifier of its own.
func (c *cluster) copyTemplate(ctx context.Context, tpl, initdb string) error {
	if err := cpA(ctx, tpl+"/.", c.dataDir()); err != nil {
		return err
	}
	if err := newSystemID(filepath.Join(c.dataDir(), "global", "pg_control")); err != nil {
		return err
	}
	resetwal := exec.CommandContext(ctx, filepath.Join(filepath.Dir(initdb), "pg_resetwal"), "-D", c.dataDir())
	resetwal.SysProcAttr = credential(c.as)
	var out bytes.Buffer
	resetwal.Stdout, resetwal.Stderr = &out, &out
	if err := child.Run(resetwal); err != nil {
		return fmt.Errorf("pg_resetwal: %v: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

// emptyDataDir leaves the data dir empty and the account's, as initdb
// wants it, after a copy that failed half way.
func (c *cluster) emptyDataDir() error {
	if err := os.RemoveAll(c.dataDir()); err != nil {
		return err
	}
	if err := os.MkdirAll(c.dataDir(), 0o700); err != nil {
		return err
	}
	return chownTree(c.dataDir(), c.as)
}

// keepTemplate copies a fresh initdb's data dir to tpl: beside it first,
// then renamed in, so a template is whole or absent; of two clusters
// keeping one at once, the second finds the first's and drops its own.
func keepTemplate(ctx context.Context, dataDir, tpl string) {
	if err := os.MkdirAll(filepath.Dir(tpl), 0o700); err != nil {
		return
	}
	tmp, err := os.MkdirTemp(filepath.Dir(tpl), "."+filepath.Base(tpl)+".*")
	if err != nil {
		return
	}
	defer os.RemoveAll(tmp)
	part := filepath.Join(tmp, "data")
	if err := cpA(ctx, dataDir, part); err != nil {
		return
	}
	_ = os.Rename(part, tpl)
}

// newSystemID writes a new random system identifier into the pg_control
// file at path and its CRC-32C anew. The identifier is the file's first
// field in every PostgreSQL version; the CRC follows the struct it covers,
// whose size varies between versions: it is found as the one offset where
// the CRC of what precedes it is stored.
func newSystemID(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	at := -1
	for i := 8; i+4 <= len(data) && i <= 1024; i += 4 {
		if crc32.Checksum(data[:i], table) == binary.LittleEndian.Uint32(data[i:]) {
			at = i
			break
		}
	}
	if at < 0 {
		return errors.New("pg_control: no CRC found")
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	copy(data[:8], id[:])
	binary.LittleEndian.PutUint32(data[at:], crc32.Checksum(data[:at], table))
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
