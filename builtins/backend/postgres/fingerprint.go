package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime"
)

// fingerprint is pg.fingerprint(tables = [...]): for each table a
// struct(rows, hash) that depends on its columns (names and types) and on
// the multiset of its rows, not on their order, so a notebook can assert
// that two arms left the same data (seed 000's "final DB state identical").
//
// The server hashes each row's text (md5 of t::text) and sums the two
// 64-bit halves of those hashes over the table: sums do not see order, and
// count duplicates. Memory stays constant whatever the table's size.
func (h *Handle) fingerprint(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var tables *starlark.List
	if err := starlark.UnpackArgs(name, args, kwargs, "tables", &tables); err != nil {
		return nil, err
	}
	db, err := h.db(th, false) // reads only
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	ctx := runtime.Context(th)
	out := starlark.NewDict(tables.Len())
	for i := range tables.Len() {
		t, ok := starlark.AsString(tables.Index(i))
		if !ok || t == "" {
			return nil, fmt.Errorf("%s: tables[%d] must be a table name, got %s", name, i, tables.Index(i).Type())
		}
		fp, err := tableFingerprint(ctx, db, t)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, t, err)
		}
		_ = out.SetKey(starlark.String(t), fp)
	}
	return out, nil
}

// querier is what a fingerprint needs of a pool.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func tableFingerprint(ctx context.Context, db querier, table string) (starlark.Value, error) {
	ident := pgx.Identifier(strings.Split(table, ".")).Sanitize()
	cols, err := tableColumns(ctx, db, ident)
	if err != nil {
		return nil, err
	}
	var rows int64
	var lo, hi string
	err = db.QueryRow(ctx, monitorTag+`SELECT count(*), coalesce(sum(('x' || substr(h, 1, 16))::bit(64)::bigint::numeric), 0)::text,
		coalesce(sum(('x' || substr(h, 17, 16))::bit(64)::bigint::numeric), 0)::text
		FROM (SELECT md5(t::text) AS h FROM `+ident+` t) s`).Scan(&rows, &lo, &hi)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("columns %s\nrows %d\nsum %s %s\n", cols, rows, lo, hi)))
	return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"rows": starlark.MakeInt64(rows),
		"hash": starlark.String(hex.EncodeToString(sum[:16])),
	}), nil
}

// tableColumns lists "name type" of the table's columns in order: a table
// with other columns is other data even when its rows print alike.
func tableColumns(ctx context.Context, db querier, ident string) (string, error) {
	rs, err := db.Query(ctx, monitorTag+`SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`, ident)
	if err != nil {
		return "", err
	}
	defer rs.Close()
	var cols []string
	for rs.Next() {
		var n, t string
		if err := rs.Scan(&n, &t); err != nil {
			return "", err
		}
		cols = append(cols, n+" "+t)
	}
	return strings.Join(cols, ", "), rs.Err()
}
