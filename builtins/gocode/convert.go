package gocode

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime/limits"
)

// Conversions between Starlark values and the reflect.Values of interpreted
// Go code. Struct fields and function names are shown to Starlark in
// snake_case (NextKey -> next_key) unless a json tag names the field.

var (
	errorType = reflect.TypeFor[error]()
	bytesType = reflect.TypeFor[[]byte]()
	timeType  = reflect.TypeFor[time.Time]()
)

// fromGo converts a Go value to Starlark. Nesting is bounded by
// limits.Depth, as every walk of a value is: a pointer loop is an error.
func fromGo(v reflect.Value) (starlark.Value, error) { return fromGoDepth(v, depthLimit()) }

func fromGoDepth(v reflect.Value, left int) (starlark.Value, error) {
	if left < 0 {
		return nil, tooDeep()
	}
	if !v.IsValid() {
		return starlark.None, nil
	}
	switch v.Type() {
	case bytesType:
		return starlark.Bytes(v.Bytes()), nil
	case timeType: // its fields are unexported: an empty struct otherwise
		return starlark.String(v.Interface().(time.Time).Format(time.RFC3339Nano)), nil
	}
	switch v.Kind() {
	case reflect.Bool:
		return starlark.Bool(v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return starlark.MakeInt64(v.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return starlark.MakeUint64(v.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return starlark.Float(v.Float()), nil
	case reflect.String:
		return starlark.String(v.String()), nil
	case reflect.Slice, reflect.Array:
		return listFromGo(v, left)
	case reflect.Map:
		return dictFromGo(v, left)
	case reflect.Struct:
		return structFromGo(v, left)
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return starlark.None, nil
		}
		if err, ok := v.Interface().(error); ok && v.Kind() == reflect.Interface {
			return starlark.String(err.Error()), nil
		}
		return fromGoDepth(v.Elem(), left-1)
	}
	return nil, fmt.Errorf("cannot convert Go %s to a Starlark value", v.Type())
}

func listFromGo(v reflect.Value, left int) (starlark.Value, error) {
	if v.Kind() == reflect.Slice && v.IsNil() {
		return starlark.NewList(nil), nil
	}
	elems := make([]starlark.Value, v.Len())
	for i := range elems {
		e, err := fromGoDepth(v.Index(i), left-1)
		if err != nil {
			return nil, fmt.Errorf("index %d: %w", i, err)
		}
		elems[i] = e
	}
	return starlark.NewList(elems), nil
}

func dictFromGo(v reflect.Value, left int) (starlark.Value, error) {
	d := starlark.NewDict(v.Len())
	keys := v.MapKeys()
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	for _, k := range keys {
		sk, err := fromGoDepth(k, left-1)
		if err != nil {
			return nil, fmt.Errorf("map key: %w", err)
		}
		sv, err := fromGoDepth(v.MapIndex(k), left-1)
		if err != nil {
			return nil, fmt.Errorf("map[%v]: %w", k, err)
		}
		if err := d.SetKey(sk, sv); err != nil {
			return nil, fmt.Errorf("map key %v: %w", k, err)
		}
	}
	return d, nil
}

func structFromGo(v reflect.Value, left int) (starlark.Value, error) {
	fields := starlark.StringDict{}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, ok := fieldName(f)
		if !ok {
			continue
		}
		fv, err := fromGoDepth(v.Field(i), left-1)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		fields[name] = fv
	}
	return starlarkstruct.FromStringDict(starlarkstruct.Default, fields), nil
}

// fieldName is the Starlark name of an exported struct field: its json tag
// name if it has one, else its Go name in snake_case.
func fieldName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	if tag, ok := f.Tag.Lookup("json"); ok {
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			return "", false
		}
		if name != "" {
			return name, true
		}
	}
	return snake(f.Name), true
}

// snake turns a Go identifier into snake_case: NextKey -> next_key,
// ParseJSON -> parse_json, URL -> url.
func snake(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 {
			prevLower := unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1])
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if prevLower || (nextLower && unicode.IsUpper(r[i-1])) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// toGo converts a Starlark value to a Go value of type t.
func toGo(x starlark.Value, t reflect.Type) (reflect.Value, error) {
	return toGoDepth(x, t, depthLimit())
}

// depthLimit is how many levels a conversion may descend (left counts
// them down).
func depthLimit() int { return int(limits.Depth.Get()) }

func tooDeep() error {
	return fmt.Errorf("value %w, a cycle? (%s)", limits.ErrTooDeep, limits.Depth.Hint())
}

func toGoDepth(x starlark.Value, t reflect.Type, left int) (reflect.Value, error) {
	if left < 0 {
		return reflect.Value{}, tooDeep()
	}
	if x == starlark.None {
		switch t.Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
			return reflect.Zero(t), nil
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		if b, ok := x.(starlark.Bool); ok {
			return reflect.ValueOf(bool(b)).Convert(t), nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if i, ok := x.(starlark.Int); ok {
			return intToGo(i, t)
		}
	case reflect.Float32, reflect.Float64:
		if f, ok := starlark.AsFloat(x); ok {
			return reflect.ValueOf(f).Convert(t), nil
		}
	case reflect.String:
		if s, ok := x.(starlark.String); ok {
			return reflect.ValueOf(string(s)).Convert(t), nil
		}
	case reflect.Slice:
		return sliceToGo(x, t, left)
	case reflect.Array:
		return arrayToGo(x, t, left)
	case reflect.Map:
		return mapToGo(x, t, left)
	case reflect.Struct:
		if t == timeType {
			return timeToGo(x)
		}
		return structToGo(x, t, left)
	case reflect.Pointer:
		e, err := toGoDepth(x, t.Elem(), left-1)
		if err != nil {
			return reflect.Value{}, err
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(e)
		return p, nil
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return anyToGo(x, t, left)
		}
	}
	return reflect.Value{}, fmt.Errorf("want %s, got %s", t, x.Type())
}

// timeToGo parses an RFC 3339 string, the form fromGo gives times.
func timeToGo(x starlark.Value) (reflect.Value, error) {
	s, ok := x.(starlark.String)
	if !ok {
		return reflect.Value{}, fmt.Errorf("want time.Time (an RFC 3339 string), got %s", x.Type())
	}
	t, err := time.Parse(time.RFC3339Nano, string(s))
	if err != nil {
		return reflect.Value{}, fmt.Errorf("want time.Time: %w", err)
	}
	return reflect.ValueOf(t), nil
}

func intToGo(i starlark.Int, t reflect.Type) (reflect.Value, error) {
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := i.Int64()
		if !ok || v.OverflowInt(n) {
			return reflect.Value{}, fmt.Errorf("%v out of range for %s", i, t)
		}
		v.SetInt(n)
	default:
		n, ok := i.Uint64()
		if !ok || v.OverflowUint(n) {
			return reflect.Value{}, fmt.Errorf("%v out of range for %s", i, t)
		}
		v.SetUint(n)
	}
	return v, nil
}

func sliceToGo(x starlark.Value, t reflect.Type, left int) (reflect.Value, error) {
	if t.Elem().Kind() == reflect.Uint8 {
		switch b := x.(type) {
		case starlark.Bytes:
			return reflect.ValueOf([]byte(b)).Convert(t), nil
		case starlark.String:
			return reflect.ValueOf([]byte(b)).Convert(t), nil
		}
	}
	elems, ok := sequence(x)
	if !ok {
		return reflect.Value{}, fmt.Errorf("want %s, got %s", t, x.Type())
	}
	s := reflect.MakeSlice(t, len(elems), len(elems))
	for i, e := range elems {
		v, err := toGoDepth(e, t.Elem(), left-1)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("index %d: %w", i, err)
		}
		s.Index(i).Set(v)
	}
	return s, nil
}

func arrayToGo(x starlark.Value, t reflect.Type, left int) (reflect.Value, error) {
	elems, ok := sequence(x)
	if !ok || len(elems) != t.Len() {
		return reflect.Value{}, fmt.Errorf("want %s, got %s of length %d", t, x.Type(), len(elems))
	}
	a := reflect.New(t).Elem()
	for i, e := range elems {
		v, err := toGoDepth(e, t.Elem(), left-1)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("index %d: %w", i, err)
		}
		a.Index(i).Set(v)
	}
	return a, nil
}

// sequence returns the elements of a list or tuple.
func sequence(x starlark.Value) ([]starlark.Value, bool) {
	switch x := x.(type) {
	case *starlark.List:
		out := make([]starlark.Value, x.Len())
		for i := range out {
			out[i] = x.Index(i)
		}
		return out, true
	case starlark.Tuple:
		return x, true
	}
	return nil, false
}

func mapToGo(x starlark.Value, t reflect.Type, left int) (reflect.Value, error) {
	d, ok := x.(*starlark.Dict)
	if !ok {
		return reflect.Value{}, fmt.Errorf("want %s, got %s", t, x.Type())
	}
	m := reflect.MakeMapWithSize(t, d.Len())
	for _, item := range d.Items() {
		k, err := toGoDepth(item[0], t.Key(), left-1)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("key %s: %w", item[0], err)
		}
		v, err := toGoDepth(item[1], t.Elem(), left-1)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("[%s]: %w", item[0], err)
		}
		m.SetMapIndex(k, v)
	}
	return m, nil
}

// structToGo fills a Go struct from a Starlark struct or a dict with string
// keys; fields are matched by their Starlark name or their Go name, and
// fields left out keep their zero value.
func structToGo(x starlark.Value, t reflect.Type, left int) (reflect.Value, error) {
	_, ok := x.(starlark.HasAttrs)
	_, isDict := x.(*starlark.Dict)
	if !ok && !isDict {
		return reflect.Value{}, fmt.Errorf("want %s (a struct or a dict), got %s", t, x.Type())
	}
	s := reflect.New(t).Elem()
	known := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, exported := fieldName(f)
		if !exported {
			continue
		}
		known[name], known[f.Name] = true, true
		fv := lookupField(x, name, f.Name)
		if fv == nil {
			continue
		}
		v, err := toGoDepth(fv, f.Type, left-1)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("field %s: %w", name, err)
		}
		s.Field(i).Set(v)
	}
	if err := unknownFields(x, known); err != nil {
		return reflect.Value{}, err
	}
	return s, nil
}

// lookupField returns the first of names present in a dict or as an
// attribute, or nil.
func lookupField(x starlark.Value, names ...string) starlark.Value {
	for _, n := range names {
		switch x := x.(type) {
		case *starlark.Dict:
			if v, found, _ := x.Get(starlark.String(n)); found {
				return v
			}
		case starlark.HasAttrs:
			if v, _ := x.Attr(n); v != nil {
				return v
			}
		}
	}
	return nil
}

// unknownFields rejects a field the Go struct does not have: a typo would
// otherwise pass silently as a zero value.
func unknownFields(x starlark.Value, known map[string]bool) error {
	var names []string
	switch x := x.(type) {
	case *starlark.Dict:
		for _, k := range x.Keys() {
			s, ok := k.(starlark.String)
			if !ok {
				return fmt.Errorf("struct field names must be strings, got %s", k.Type())
			}
			names = append(names, string(s))
		}
	case starlark.HasAttrs:
		names = x.AttrNames()
	}
	for _, n := range names {
		if !known[n] {
			return fmt.Errorf("no field %q in the Go struct", n)
		}
	}
	return nil
}

// anyToGo converts to the natural Go type of a Starlark value, for
// parameters of type any: int, float64, string, bool, []byte, []any and
// map[string]any (map[any]any when a key is not a string).
func anyToGo(x starlark.Value, t reflect.Type, left int) (reflect.Value, error) {
	var v any
	switch x := x.(type) {
	case starlark.NoneType:
		return reflect.Zero(t), nil
	case starlark.Bool:
		v = bool(x)
	case starlark.Int:
		n, ok := x.Int64()
		if !ok || n > math.MaxInt || n < math.MinInt {
			return reflect.Value{}, fmt.Errorf("%v does not fit in a Go int", x)
		}
		v = int(n)
	case starlark.Float:
		v = float64(x)
	case starlark.String:
		v = string(x)
	case starlark.Bytes:
		v = []byte(x)
	case *starlark.List, starlark.Tuple:
		return sliceToGoAny(x, t, left)
	case *starlark.Dict:
		return dictToGoAny(x, t, left)
	default:
		return reflect.Value{}, fmt.Errorf("cannot pass a Starlark %s as Go %s", x.Type(), t)
	}
	r := reflect.New(t).Elem()
	r.Set(reflect.ValueOf(v))
	return r, nil
}

func sliceToGoAny(x starlark.Value, t reflect.Type, left int) (reflect.Value, error) {
	s, err := sliceToGo(x, reflect.TypeFor[[]any](), left)
	if err != nil {
		return reflect.Value{}, err
	}
	r := reflect.New(t).Elem()
	r.Set(s)
	return r, nil
}

func dictToGoAny(d *starlark.Dict, t reflect.Type, left int) (reflect.Value, error) {
	mt := reflect.TypeFor[map[string]any]()
	for _, k := range d.Keys() {
		if _, ok := k.(starlark.String); !ok {
			mt = reflect.TypeFor[map[any]any]()
		}
	}
	m, err := mapToGo(d, mt, left)
	if err != nil {
		return reflect.Value{}, err
	}
	r := reflect.New(t).Elem()
	r.Set(m)
	return r, nil
}
