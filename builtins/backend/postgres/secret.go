package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// A cluster of benchbook's own lives in the cache dir, and PostgreSQL
// keeps statement texts there: pg_stat_statements in the data dir (and so
// in every snapshot), the server's log for a statement that failed. A
// CREATE or ALTER ROLE with a PASSWORD would leave the password in them.
// The cluster runs with log_min_error_statement = panic (confLines), so no
// client's failing statement reaches the log; pg.exec's own connection
// also keeps its statements out of pg_stat_statements, and the entries
// other clients' statements made are dropped before the cluster stops.

// execUnrecorded runs sql on one connection that neither tracks it in
// pg_stat_statements nor logs it when it fails (settings only a superuser
// may change, which benchbook is on its own cluster).
func execUnrecorded(ctx context.Context, db *pgxpool.Pool, sql string) (int64, error) {
	conn, err := db.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET pg_stat_statements.track = 'none'; SET log_min_error_statement = 'panic'; SET log_statement = 'none'"); err != nil {
		return 0, err
	}
	tag, err := conn.Exec(ctx, sql)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, rerr := conn.Exec(rctx, "RESET pg_stat_statements.track; RESET log_min_error_statement; RESET log_statement"); rerr != nil {
		conn.Conn().Close(rctx) // a pooled connection must not keep them
	}
	return tag.RowsAffected(), err
}

// forgetPasswords drops the pg_stat_statements entries whose text holds a
// PASSWORD literal (another client's CREATE ROLE, a workload's), before
// benchbook stops its cluster: the texts of the entries left are what the
// shutdown writes into the data dir, which snapshots copy.
func forgetPasswords(db *pgxpool.Pool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = db.Exec(ctx, `SELECT count(pg_stat_statements_reset(userid, dbid, queryid))
		FROM pg_stat_statements WHERE query ~* $re$password\s+'$re$`)
}
