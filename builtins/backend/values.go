package backend

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/netip"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/display"
)

// toGo converts a query argument to what the database drivers accept.
func toGo(v starlark.Value) (any, error) {
	switch v := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(v), nil
	case starlark.Int:
		if n, ok := v.Int64(); ok {
			return n, nil
		}
		return v.BigInt().String(), nil
	case starlark.Float:
		return float64(v), nil
	case starlark.String:
		return string(v), nil
	case starlark.Bytes:
		return []byte(v), nil
	}
	return nil, fmt.Errorf("cannot pass a %s as a query argument", v.Type())
}

// toStarlark converts a column value read from a database.
func toStarlark(v any) starlark.Value {
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

// makeTable is the value of a query result: a display table (rows index
// as dicts keyed by column name).
func makeTable(cols []string, rows [][]starlark.Value) starlark.Value {
	return display.NewTable(cols, rows)
}

// settingString renders a Starlark setting value the way postgresql.conf
// wants it: booleans as on/off.
func settingString(v starlark.Value) (string, error) {
	switch v := v.(type) {
	case starlark.String:
		return string(v), nil
	case starlark.Bool:
		if v {
			return "on", nil
		}
		return "off", nil
	case starlark.Int, starlark.Float:
		return v.String(), nil
	}
	return "", fmt.Errorf("a setting must be a string, number or bool, got %s", v.Type())
}

// reservedSettings are where the cluster listens: always benchbook's.
var reservedSettings = map[string]bool{"port": true, "listen_addresses": true, "unix_socket_directories": true}

// settingsDict reads a settings={...} argument.
func settingsDict(d *starlark.Dict) (map[string]string, error) {
	out := map[string]string{}
	if d == nil {
		return out, nil
	}
	for _, kv := range d.Items() {
		k, ok := starlark.AsString(kv[0])
		if !ok {
			return nil, fmt.Errorf("setting names must be strings, got %s", kv[0].Type())
		}
		if reservedSettings[k] {
			return nil, fmt.Errorf("%s is benchbook's to choose (a private socket dir and a free loopback port)", k)
		}
		s, err := settingString(kv[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		if strings.ContainsAny(s, "\n\r\x00") {
			return nil, fmt.Errorf("%s: a setting must be on one line, got %q", k, s)
		}
		out[k] = s
	}
	return out, nil
}
