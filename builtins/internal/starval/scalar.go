package starval

import "go.starlark.net/starlark"

// Scalar is a Starlark scalar as Go: None nil, a bool, an int an int64 (a
// *big.Int past it), a float a float64, a string a string, bytes []byte.
// ok is false for anything else (a container, a host value). The
// converters to a driver's arguments (backend's SQL, starbson's BSON) start
// here and differ only where their target does.
func Scalar(v starlark.Value) (x any, ok bool) {
	switch v := v.(type) {
	case starlark.NoneType:
		return nil, true
	case starlark.Bool:
		return bool(v), true
	case starlark.Int:
		if n, fits := v.Int64(); fits {
			return n, true
		}
		return v.BigInt(), true
	case starlark.Float:
		return float64(v), true
	case starlark.String:
		return string(v), true
	case starlark.Bytes:
		return []byte(v), true
	}
	return nil, false
}
