// Package conv exercises every conversion between Starlark and Go.
package conv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

const Answer = 42

const Greeting = "hello"

type Point struct {
	X     int
	Y     int
	Label string `json:"name"`
	Tags  []string
	inner int
}

func Not(b bool) bool               { return !b }
func Add(a, b int) int              { return a + b }
func Wide(a int64, b uint32) uint64 { return uint64(a) + uint64(b) }
func Small(a int8) int8             { return a }
func Half(x float64) float64        { return x / 2 }
func Upper(s string) string         { return strings.ToUpper(s) }
func Reverse(b []byte) []byte {
	r := make([]byte, len(b))
	for i := range b {
		r[len(b)-1-i] = b[i]
	}
	return r
}
func Sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}
func Pair(a [2]string) string { return a[0] + a[1] }
func Keys(m map[string]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
func Counts(words []string) map[string]int {
	m := map[string]int{}
	for _, w := range words {
		m[w]++
	}
	return m
}
func Mid(a, b Point) Point {
	return Point{X: (a.X + b.X) / 2, Y: (a.Y + b.Y) / 2, Label: a.Label + b.Label}
}
func Origin() *Point                          { return &Point{Label: "o"} }
func Nothing() *Point                         { return nil }
func Move(p *Point, dx int) Point             { p.X += dx; return *p }
func Describe(v any) string                   { return fmt.Sprintf("%T %v", v, v) }
func Join(sep string, parts ...string) string { return strings.Join(parts, sep) }
func DivMod(a, b int) (int, int)              { return a / b, a % b }
func NoResult()                               {}

func Parse(s string) (int, error) {
	if s == "" {
		return 0, errors.New("empty input")
	}
	return len(s), nil
}

func Check(ok bool) error {
	if !ok {
		return fmt.Errorf("check failed")
	}
	return nil
}

// Deadline reports whether the context it was given is the cell's.
func Deadline(ctx context.Context, label string) string {
	if ctx == nil {
		return "nil"
	}
	return label + ":" + fmt.Sprint(ctx.Err())
}

func ParseJSONKey(rawInput string) string { return "k=" + rawInput }

// Later is t plus d, in UTC: times travel as RFC 3339 strings.
func Later(t time.Time, d time.Duration) time.Time { return t.Add(d).UTC() }

// Node makes a pointer loop, which no conversion can finish.
type Node struct{ Next *Node }

func Loop() *Node { n := &Node{}; n.Next = n; return n }
