package kit

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/netip"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// ToGo converts a query argument to what the database drivers accept: a
// scalar (starval.Scalar), an int past int64 as its digits (PostgreSQL
// reads them into a numeric, SQLite into a real).
func ToGo(v starlark.Value) (any, error) {
	x, ok := starval.Scalar(v)
	if !ok {
		return nil, fmt.Errorf("cannot pass a %s as a query argument", v.Type())
	}
	if n, big := x.(*big.Int); big {
		return n.String(), nil
	}
	return x, nil
}

// ToStarlark converts a column value read from a database.
func ToStarlark(v any) starlark.Value {
	switch v := v.(type) {
	case nil:
		return starlark.None
	case bool:
		return starlark.Bool(v)
	case int64:
		return starlark.MakeInt64(v)
	case int32:
		return starlark.MakeInt64(int64(v))
	case int16:
		return starlark.MakeInt64(int64(v))
	case int:
		return starlark.MakeInt(v)
	case uint32:
		return starlark.MakeUint64(uint64(v))
	case float64:
		return starlark.Float(v)
	case float32:
		return starlark.Float(v)
	case string:
		return starlark.String(v)
	case []byte:
		return starlark.Bytes(v)
	case time.Time:
		return starlark.String(v.Format(time.RFC3339Nano))
	case time.Duration:
		return starlark.String(v.String())
	case *big.Int:
		return starlark.MakeBigInt(v)
	case pgtype.Numeric:
		return numeric(v)
	case netip.Prefix, netip.Addr, fmt.Stringer:
		return starlark.String(fmt.Sprint(v))
	case map[string]any, []any:
		b, _ := json.Marshal(v)
		return starlark.String(b)
	}
	return starlark.String(fmt.Sprint(v))
}

// numeric returns an integral numeric as an int, any other as a float.
func numeric(n pgtype.Numeric) starlark.Value {
	if !n.Valid {
		return starlark.None
	}
	if n.Exp >= 0 && !n.NaN && n.InfinityModifier == pgtype.Finite {
		i := new(big.Int).Set(n.Int)
		i.Mul(i, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n.Exp)), nil))
		return starlark.MakeBigInt(i)
	}
	f, err := n.Float64Value()
	if err != nil || !f.Valid {
		return starlark.None
	}
	return starlark.Float(f.Float64)
}

// SQLArgs reads the arguments of .query(sql, *args) and .exec(sql, *args):
// the statement and its parameters ($1, $2... or ?) as the drivers take them.
func SQLArgs(name string, args starlark.Tuple, kwargs []starlark.Tuple) (string, []any, error) {
	if len(kwargs) > 0 {
		return "", nil, fmt.Errorf("%s: unexpected keyword argument %s", name, kwargs[0][0])
	}
	if len(args) < 1 {
		return "", nil, fmt.Errorf("%s: missing argument sql", name)
	}
	q, ok := starlark.AsString(args[0])
	if !ok {
		return "", nil, fmt.Errorf("%s: sql must be a string, got %s", name, args[0].Type())
	}
	params := make([]any, len(args)-1)
	for i, a := range args[1:] {
		v, err := ToGo(a)
		if err != nil {
			return "", nil, fmt.Errorf("%s: argument %d: %w", name, i+1, err)
		}
		params[i] = v
	}
	return q, params, nil
}

// ReadOnly reports whether a query statement cannot write: a plain SELECT,
// SHOW, EXPLAIN without ANALYZE, VALUES or TABLE. Anything else (a DML
// statement with RETURNING, a function call that writes) counts as a change.
func ReadOnly(sql string) bool {
	s := strings.ToUpper(strings.TrimSpace(sql))
	for _, p := range []string{"SELECT", "SHOW", "VALUES", "TABLE"} {
		if strings.HasPrefix(s, p) {
			return !strings.Contains(s, " INTO ") && !strings.Contains(s, "NEXTVAL") && !strings.Contains(s, "SETVAL")
		}
	}
	return strings.HasPrefix(s, "EXPLAIN") && !strings.Contains(s, "ANALYZE")
}
