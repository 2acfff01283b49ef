package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// TestServerProvenance: a cell that queried the cluster records the
// server's version and its non-default settings (as the server itself
// reports them through SHOW), without its port or socket directory.
func TestServerProvenance(t *testing.T) {
	cell := &runtime.Cell{Name: "uses_pg"}
	th := startest.Thread(t, startest.Options{NotebookDir: sharedDir, CacheDir: sharedDir, Cell: cell})
	if _, err := starlark.ExecFileOptions(runtime.FileOptions(), th, "prov.star", `n = pg.query("SELECT 1 AS one")`, starlark.StringDict{"pg": shared}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range cell.Inputs() {
		if in.Kind == "server" {
			got = append(got, in.Name)
		}
	}
	if len(got) != 1 {
		t.Fatalf("server inputs: %q, want one", got)
	}
	conn, err := pgx.Connect(context.Background(), shared.dsnString())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	show := func(name string) string {
		var v string
		if err := conn.QueryRow(context.Background(), "SHOW "+name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	desc := got[0]
	for _, want := range []string{"PostgreSQL " + show("server_version"), "shared_buffers=" + show("shared_buffers"),
		"shared_preload_libraries=" + show("shared_preload_libraries")} {
		if !strings.Contains(desc, want) {
			t.Errorf("server description lacks %q: %s", want, desc)
		}
	}
	for _, bad := range []string{"port=", "unix_socket_directories", "password"} {
		if strings.Contains(desc, bad) {
			t.Errorf("server description holds %q: %s", bad, desc)
		}
	}
}

func TestSecretSettingsLeftOut(t *testing.T) {
	for name, secret := range map[string]bool{
		"ssl_passphrase_command": true, "ssl_key_file": true, "primary_conninfo": true,
		"shared_buffers": false, "work_mem": false, "krb_server_keyfile": true,
	} {
		if secretSetting(name) != secret {
			t.Errorf("secretSetting(%q) = %v, want %v", name, !secret, secret)
		}
	}
	if got := withUnit("16384", "8kB"); got != "128MB" {
		t.Errorf("16384 × 8kB = %q, want 128MB", got)
	}
}
