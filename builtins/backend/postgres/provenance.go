package postgres

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/redact"
)

// A cell that used a PostgreSQL server records which one it measured: its
// version and the settings that differ from PostgreSQL's defaults, as an
// input of kind "server" that the record shows in its provenance. It has
// no checker: it describes, it does not make entries stale (the
// "resource" input does that for the cluster's data).

// serverDescriptions caches one description per pool: a pool lives as long
// as one start of the server, so a restart with new settings is described
// afresh.
var serverDescriptions sync.Map // *pgxpool.Pool -> string

// environmentSettings are non-default settings that say where the server
// runs rather than how it performs; they would crowd out the ones that
// matter.
var environmentSettings = map[string]bool{
	"port": true, "unix_socket_directories": true, "listen_addresses": true,
	"lc_messages": true, "lc_monetary": true, "lc_numeric": true, "lc_time": true,
	"datestyle": true, "timezone": true, "log_timezone": true, "default_text_search_config": true,
	"application_name": true, "client_encoding": true, "cluster_name": true,
}

// addServerInput records the server's description for the calling cell.
func addServerInput(th *starlark.Thread, pool *pgxpool.Pool, root string) {
	if pool == nil {
		return
	}
	desc, ok := serverDescriptions.Load(pool)
	if !ok {
		d, err := describeServer(pool)
		if err != nil {
			return // provenance is best effort; the cell's own query will report a dead server
		}
		desc, _ = serverDescriptions.LoadOrStore(pool, d)
	}
	name := desc.(string)
	if root != "" {
		name = filepath.Base(filepath.Dir(root)) + ": " + name // cluster-<id>
	}
	runtime.AddInput(th, runtime.Input{Kind: "server", Name: name})
}

// describeServer is "PostgreSQL 15.8; non-default: shared_buffers=128MB, ...".
func describeServer(pool *pgxpool.Pool) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var version string
	if err := pool.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
		return "", err
	}
	rows, err := pool.Query(ctx, `SELECT name, setting, coalesce(unit, '') FROM pg_settings
		WHERE source NOT IN ('default', 'override', 'client', 'session') ORDER BY name`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var set []string
	for rows.Next() {
		var name, value, unit string
		if err := rows.Scan(&name, &value, &unit); err != nil {
			return "", err
		}
		if environmentSettings[strings.ToLower(name)] || secretSetting(name) {
			continue
		}
		// A value may hold a secret its name does not announce
		// (primary_conninfo = '... password=...'): redact it.
		set = append(set, name+"="+redact.String(withUnit(value, unit)))
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	desc := "PostgreSQL " + version
	if len(set) > 0 {
		desc += "; non-default: " + strings.Join(set, ", ")
	}
	return desc, nil
}

// secretSetting keeps passphrase commands, key files and connection
// strings out of records.
func secretSetting(name string) bool {
	n := strings.ToLower(name)
	return redact.SecretName(name) || strings.Contains(n, "pass") || strings.Contains(n, "key") || strings.Contains(n, "conninfo")
}

// withUnit writes 16384 with unit 8kB as 128MB, as SHOW does.
func withUnit(value, unit string) string {
	var n int64
	if _, err := fmt.Sscan(value, &n); err != nil || unit == "" {
		return value + unit
	}
	bytes := map[string]int64{"B": 1, "kB": 1 << 10, "8kB": 8 << 10, "MB": 1 << 20, "16MB": 16 << 20}
	if b, ok := bytes[unit]; ok {
		total := n * b
		for _, u := range []struct {
			name string
			size int64
		}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}} {
			if total >= u.size && total%u.size == 0 {
				return fmt.Sprintf("%d%s", total/u.size, u.name)
			}
		}
		return fmt.Sprintf("%dB", total)
	}
	return value + unit
}
