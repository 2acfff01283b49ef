// Package bytesize reads and writes sizes in bytes, one way for all of
// benchbook. Its users: a container's memory limit, a limited process's, the
// host guard's free-disk watermark, the BENCHBOOK_MAX_* and
// BENCHBOOK_STATE_LIMIT variables. "64MB" meant 64 MiB to the cgroup limits
// and 64,000,000 bytes to the host guard; now it means one thing.
//
// The rule is Docker's (docker run --memory), which users of container
// limits already write: every unit is binary and its case does not matter.
//
//	b                 1
//	k, kb, kib        1024
//	m, mb, mib        1024²
//	g, gb, gib        1024³
//	t, tb, tib        1024⁴
//	p, pb, pib        1024⁵
//
// A number may have a fraction ("1.5GiB") and a space before its unit; a
// number alone is bytes. A leaf: runtime and builtins both import it.
package bytesize

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// sizeRe is Docker's shape of a size (go-units' RAMInBytes): a number, an
// optional space, an optional unit letter, then an optional "i" and "b".
var sizeRe = regexp.MustCompile(`^(\d+(?:\.\d+)?) ?([kmgtp]?)(i?b)?$`)

var shifts = map[string]uint{"": 0, "k": 10, "m": 20, "g": 30, "t": 40, "p": 50}

// Parse reads a size such as "64MB", "512m", "1.5GiB" or "1048576".
func Parse(s string) (int64, error) {
	m := sizeRe.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m != nil && !(m[2] == "" && m[3] == "ib") {
		f, err := strconv.ParseFloat(m[1], 64)
		if n := f * float64(int64(1)<<shifts[m[2]]); err == nil && n < float64(math.MaxInt64/2) {
			return int64(n), nil
		}
	}
	return 0, fmt.Errorf(`want a size such as "64MB", "512m" or "1.5GiB" (binary units, as Docker's: 1MB = 1 MiB), got %q`, s)
}

// Format writes n as Parse reads it: in the largest unit that divides it
// ("64MB", "1GB"), else in the largest unit below it with one decimal
// ("812.3MB"), else in bytes ("900B").
func Format(n int64) string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{"TB", 40}, {"GB", 30}, {"MB", 20}, {"kB", 10}} {
		size := int64(1) << u.shift
		switch {
		case n >= size && n%size == 0:
			return strconv.FormatInt(n/size, 10) + u.name
		case n >= size:
			return strconv.FormatFloat(float64(n)/float64(size), 'f', 1, 64) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
