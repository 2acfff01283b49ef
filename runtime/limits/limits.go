// Package limits bounds what benchbook reads and keeps from inputs it cannot
// trust. Those are files (a notebook, a module, file(), a cache entry, a
// baseline record) and the values a cell makes. Every limit has a default
// and an environment variable that raises it; an input over a limit is an
// error that names it and says which variable to set.
//
//	limit                               default  variable
//	size of a notebook, module, file()  16 MiB   BENCHBOOK_MAX_FILE
//	size of a cache entry or record     1 GiB    BENCHBOOK_MAX_RECORD
//	nesting depth of a value            1000     BENCHBOOK_MAX_DEPTH (at most 100000)
//	size of a value (encoded, roughly)  64 MiB   BENCHBOOK_MAX_VALUE
package limits

import (
	"os"
	"strconv"
	"strings"

	"github.com/benchbook/benchbook/runtime/bytesize"
)

// A Limit is one bound: its default and the variable that overrides it.
type Limit struct {
	Name    string // what is bounded, for messages ("file size")
	Env     string // the environment variable that overrides Default
	Default int64
	Bytes   bool  // a size in bytes: the variable takes a size ("64M", "64MB", "1GiB": runtime/bytesize)
	Max     int64 // the variable is capped here (0: no cap)
}

var (
	// File bounds a notebook, a loaded module and a file() input.
	File = Limit{Name: "file size", Env: "BENCHBOOK_MAX_FILE", Default: 16 << 20, Bytes: true}
	// Record bounds a cache entry and a JSON record read back (-baseline).
	Record = Limit{Name: "record size", Env: "BENCHBOOK_MAX_RECORD", Default: 1 << 30, Bytes: true}
	// Depth bounds the nesting of a value displayed, encoded or hashed.
	// Its cap keeps the recursive walks (redaction, the codec) within Go's
	// stack: at 3 million levels they overflowed it, a crash no error names.
	Depth = Limit{Name: "value depth", Env: "BENCHBOOK_MAX_DEPTH", Default: 1000, Max: 100_000}
	// Value bounds the size of a value displayed, encoded or hashed.
	Value = Limit{Name: "value size", Env: "BENCHBOOK_MAX_VALUE", Default: 64 << 20, Bytes: true}
)

// All lists the limits, for the docs (docs/guides/limits.md) and for messages.
var All = []*Limit{&File, &Record, &Depth, &Value}

// Get is the limit in force: the variable when it is set to a positive
// number (at most Max), else the default. A malformed variable keeps the
// default (the error would otherwise surface far from where it was set).
func (l Limit) Get() int64 {
	s := strings.TrimSpace(os.Getenv(l.Env))
	if s == "" {
		return l.Default
	}
	n, ok := parse(s, l.Bytes)
	if !ok || n <= 0 {
		return l.Default
	}
	if l.Max > 0 {
		n = min(n, l.Max)
	}
	return n
}

// Hint says how to raise the limit, for the end of an error message.
func (l Limit) Hint() string {
	return l.Name + " limit " + l.Format(l.Get()) + ", raise it with " + l.Env
}

// Format writes n the way the variable takes it.
func (l Limit) Format(n int64) string {
	if !l.Bytes {
		return strconv.FormatInt(n, 10)
	}
	return bytesize.Format(n)
}

// parse reads a variable: a size (bytesize's rule: "64M", "64MB", "1GiB")
// for a limit in bytes, else a number.
func parse(s string, bytes bool) (int64, bool) {
	if bytes {
		n, err := bytesize.Parse(s)
		return n, err == nil && n <= 1<<62
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
