// Package codec stores Starlark values as bytes, for the cache. A cell's
// results are cached on disk and read back by a later run.
//
// The format is a tagged binary encoding: one tag byte per value, varint
// lengths, and the host's own types (a histogram, a run, a table) as their
// Type() and bytes, read back by the decoders the caller passes (Types: the
// engine's modules give them, so this package holds no registry). A value
// the codec cannot store (a function, a live backend handle) yields an error
// wrapping ErrNotStorable; the engine then treats the cell that made it as
// live.
package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime/limits"
)

// Version is written in front of every encoded value; a change of format
// bumps it so old cache entries read as misses, not as garbage.
const Version = 1

// ErrNotStorable marks values that cannot be encoded (functions, handles).
var ErrNotStorable = errors.New("value cannot be stored")

// Marshaler is implemented by host types that can be stored. The bytes are
// handed back to the decoder of the value's Type() in the Types given to
// Decode.
type Marshaler interface {
	starlark.Value
	MarshalValue() ([]byte, error)
}

// DecodeFunc rebuilds a host value from the bytes its MarshalValue wrote;
// types decodes what it holds in turn (a table's cells).
type DecodeFunc func(data []byte, types Types) (starlark.Value, error)

// Types are the host types a decoder knows, each by its Type(): the
// decoders of an engine's modules (runtime.Module.Decoders).
type Types map[string]DecodeFunc

const (
	tagNone byte = iota
	tagFalse
	tagTrue
	tagInt
	tagBigInt
	tagFloat
	tagString
	tagBytes
	tagList
	tagTuple
	tagDict
	tagStruct
	tagSet
	tagHost
)

// Encode returns the bytes of v. It fails with an error wrapping
// ErrNotStorable if v (or anything inside it) cannot be stored.
func Encode(v starlark.Value) ([]byte, error) {
	e := encoder{maxDepth: int(limits.Depth.Get()), maxSize: int(limits.Value.Get())}
	e.buf.WriteByte(Version)
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	return e.buf.Bytes(), nil
}

// Decode is the inverse of Encode; types rebuild the host values. Decoded
// values are frozen.
func Decode(data []byte, types Types) (starlark.Value, error) {
	if len(data) == 0 || data[0] != Version {
		return nil, fmt.Errorf("codec: unknown format version")
	}
	d := decoder{data: data[1:], maxDepth: int(limits.Depth.Get()), types: types}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if len(d.data) != 0 {
		return nil, fmt.Errorf("codec: %d trailing bytes", len(d.data))
	}
	v.Freeze()
	return v, nil
}

// An encoder and a decoder bound their recursion by limits.Depth, so that a
// cyclic or hostile value is an error, not a crash; the encoder bounds its
// output by limits.Value.
type encoder struct {
	buf      bytes.Buffer
	maxDepth int
	maxSize  int
}

func (e *encoder) uvarint(n uint64) {
	var b [binary.MaxVarintLen64]byte
	e.buf.Write(b[:binary.PutUvarint(b[:], n)])
}

func (e *encoder) str(s string) {
	e.uvarint(uint64(len(s)))
	e.buf.WriteString(s)
}

func (e *encoder) value(v starlark.Value, depth int) error {
	if depth > e.maxDepth {
		return fmt.Errorf("%w: nested more than %d levels (a cycle?) (%s)", ErrNotStorable, e.maxDepth, limits.Depth.Hint())
	}
	if e.buf.Len() > e.maxSize {
		return fmt.Errorf("codec: %w: more than %d bytes (%s)", limits.ErrTooLarge, e.maxSize, limits.Value.Hint())
	}
	switch v := v.(type) {
	case starlark.NoneType:
		e.buf.WriteByte(tagNone)
	case starlark.Bool:
		if v {
			e.buf.WriteByte(tagTrue)
		} else {
			e.buf.WriteByte(tagFalse)
		}
	case starlark.Int:
		if i, ok := v.Int64(); ok {
			e.buf.WriteByte(tagInt)
			var b [binary.MaxVarintLen64]byte
			e.buf.Write(b[:binary.PutVarint(b[:], i)])
		} else {
			e.buf.WriteByte(tagBigInt)
			text, _ := v.BigInt().MarshalText()
			e.str(string(text))
		}
	case starlark.Float:
		e.buf.WriteByte(tagFloat)
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(float64(v)))
		e.buf.Write(b[:])
	case starlark.String:
		e.buf.WriteByte(tagString)
		e.str(string(v))
	case starlark.Bytes:
		e.buf.WriteByte(tagBytes)
		e.str(string(v))
	case *starlark.List:
		e.buf.WriteByte(tagList)
		return e.seq(v, depth)
	case starlark.Tuple:
		e.buf.WriteByte(tagTuple)
		return e.seq(v, depth)
	case *starlark.Set:
		e.buf.WriteByte(tagSet)
		return e.seq(v, depth)
	case *starlark.Dict:
		e.buf.WriteByte(tagDict)
		items := v.Items()
		e.uvarint(uint64(len(items)))
		for _, kv := range items {
			if err := e.value(kv[0], depth+1); err != nil {
				return err
			}
			if err := e.value(kv[1], depth+1); err != nil {
				return err
			}
		}
	case *starlarkstruct.Struct:
		return e.structValue(v, depth)
	case Marshaler:
		data, err := v.MarshalValue()
		if err != nil {
			return err
		}
		e.buf.WriteByte(tagHost)
		e.str(v.Type())
		e.str(string(data))
	default:
		return fmt.Errorf("%w: %s", ErrNotStorable, v.Type())
	}
	return nil
}

type sequence interface {
	starlark.Iterable
	Len() int
}

func (e *encoder) seq(s sequence, depth int) error {
	e.uvarint(uint64(s.Len()))
	it := s.Iterate()
	defer it.Done()
	var x starlark.Value
	for it.Next(&x) {
		if err := e.value(x, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (e *encoder) structValue(s *starlarkstruct.Struct, depth int) error {
	ctor, ok := s.Constructor().(starlark.String)
	if !ok {
		if s.Constructor() != starlarkstruct.Default {
			return fmt.Errorf("%w: struct with constructor %s", ErrNotStorable, s.Constructor().Type())
		}
		ctor = ""
	}
	e.buf.WriteByte(tagStruct)
	e.str(string(ctor))
	names := s.AttrNames()
	sort.Strings(names)
	e.uvarint(uint64(len(names)))
	for _, name := range names {
		field, _ := s.Attr(name)
		e.str(name)
		if err := e.value(field, depth+1); err != nil {
			return err
		}
	}
	return nil
}

type decoder struct {
	data     []byte
	maxDepth int
	types    Types
}

var errShort = errors.New("codec: truncated data")

func (d *decoder) uvarint() (uint64, error) {
	n, size := binary.Uvarint(d.data)
	if size <= 0 {
		return 0, errShort
	}
	d.data = d.data[size:]
	return n, nil
}

func (d *decoder) str() (string, error) {
	n, err := d.uvarint()
	if err != nil {
		return "", err
	}
	if uint64(len(d.data)) < n {
		return "", errShort
	}
	s := string(d.data[:n])
	d.data = d.data[n:]
	return s, nil
}

func (d *decoder) count() (int, error) {
	n, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	// Every element takes at least one byte: a larger count is corrupt.
	if n > uint64(len(d.data)) {
		return 0, errShort
	}
	return int(n), nil
}

func (d *decoder) value(depth int) (starlark.Value, error) {
	if depth > d.maxDepth {
		return nil, fmt.Errorf("codec: nested too deeply")
	}
	if len(d.data) == 0 {
		return nil, errShort
	}
	tag := d.data[0]
	d.data = d.data[1:]
	switch tag {
	case tagNone:
		return starlark.None, nil
	case tagFalse:
		return starlark.False, nil
	case tagTrue:
		return starlark.True, nil
	case tagInt:
		i, size := binary.Varint(d.data)
		if size <= 0 {
			return nil, errShort
		}
		d.data = d.data[size:]
		return starlark.MakeInt64(i), nil
	case tagBigInt:
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		b, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("codec: bad big int %q", s)
		}
		return starlark.MakeBigInt(b), nil
	case tagFloat:
		if len(d.data) < 8 {
			return nil, errShort
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(d.data))
		d.data = d.data[8:]
		return starlark.Float(f), nil
	case tagString:
		s, err := d.str()
		return starlark.String(s), err
	case tagBytes:
		s, err := d.str()
		return starlark.Bytes(s), err
	case tagList, tagTuple, tagSet:
		return d.seq(tag, depth)
	case tagDict:
		return d.dict(depth)
	case tagStruct:
		return d.structValue(depth)
	case tagHost:
		return d.host()
	}
	return nil, fmt.Errorf("codec: unknown tag %d", tag)
}

func (d *decoder) seq(tag byte, depth int) (starlark.Value, error) {
	n, err := d.count()
	if err != nil {
		return nil, err
	}
	elems := make([]starlark.Value, n)
	for i := range elems {
		if elems[i], err = d.value(depth + 1); err != nil {
			return nil, err
		}
	}
	switch tag {
	case tagList:
		return starlark.NewList(elems), nil
	case tagTuple:
		return starlark.Tuple(elems), nil
	}
	set := starlark.NewSet(n)
	for _, x := range elems {
		if err := set.Insert(x); err != nil {
			return nil, fmt.Errorf("codec: %v", err)
		}
	}
	return set, nil
}

func (d *decoder) dict(depth int) (starlark.Value, error) {
	n, err := d.count()
	if err != nil {
		return nil, err
	}
	dict := starlark.NewDict(n)
	for range n {
		k, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if err := dict.SetKey(k, v); err != nil {
			return nil, fmt.Errorf("codec: %v", err)
		}
	}
	return dict, nil
}

func (d *decoder) structValue(depth int) (starlark.Value, error) {
	ctor, err := d.str()
	if err != nil {
		return nil, err
	}
	n, err := d.count()
	if err != nil {
		return nil, err
	}
	fields := make(starlark.StringDict, n)
	for range n {
		name, err := d.str()
		if err != nil {
			return nil, err
		}
		if fields[name], err = d.value(depth + 1); err != nil {
			return nil, err
		}
	}
	var c starlark.Value = starlarkstruct.Default
	if ctor != "" {
		c = starlark.String(ctor)
	}
	return starlarkstruct.FromStringDict(c, fields), nil
}

func (d *decoder) host() (starlark.Value, error) {
	typ, err := d.str()
	if err != nil {
		return nil, err
	}
	data, err := d.str()
	if err != nil {
		return nil, err
	}
	decode := d.types[typ]
	if decode == nil {
		return nil, fmt.Errorf("codec: no decoder for type %q (no module of this run makes it)", typ)
	}
	return decode([]byte(data), d.types)
}
