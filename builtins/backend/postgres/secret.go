package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/benchbook/benchbook/runtime/redact"
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

// forgetPasswords drops the pg_stat_statements entries whose text sets a
// password (in any quoting: PASSWORD $$PW$$ as well as 'PW') or holds a
// secret benchbook learned (another client's CREATE ROLE, a workload's, a
// token in a utility statement's text, which the server keeps as written),
// before benchbook stops its cluster: the texts of the entries left are what
// the shutdown writes into the data dir, which snapshots copy. The texts
// are judged by the redactor, not by a regular expression in SQL: one rule
// for what a record hides and what the data dir keeps.
func forgetPasswords(db *pgxpool.Pool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := db.Query(ctx, `SELECT userid, dbid, queryid, query FROM pg_stat_statements`)
	if err != nil {
		return
	}
	type id struct {
		user, db uint32
		query    int64
	}
	var drop []id
	for rows.Next() {
		var i id
		var text *string
		if rows.Scan(&i.user, &i.db, &i.query, &text) == nil && text != nil && (redact.HasSQLPassword(*text) || redact.Known(*text)) {
			drop = append(drop, i)
		}
	}
	rows.Close()
	for _, i := range drop {
		_, _ = db.Exec(ctx, `SELECT pg_stat_statements_reset($1::oid, $2::oid, $3::bigint)`, i.user, i.db, i.query)
	}
}
