// Package notebooks holds the Go generators the notebooks load; this one
// makes search keys. zipf_keys.go generates search requests for the demo
// target (GET /search?q=<token>&limit=20, tokens t0000..t1999): keys drawn
// from a Zipf distribution (a few hot tokens and a long tail, as real search
// traffic has) or uniformly. It is loaded by zipf-keys.star through
// gocode.file and called by workload.http for every request, from Go.
//
// Both generators use math/rand with a fixed seed; Reset puts them back to
// the start of their sequence, so every run sends the same keys. Calls are
// serialized by gocode (the *rand.Rand here are not safe for concurrent use).
package notebooks

import (
	"fmt"
	"math/rand"
	"sort"
	"strconv"
)

// Vocabulary is the number of distinct tokens of the demo's data.
const Vocabulary = 2000

// Exponent is the Zipf exponent s (> 1): the k-th most frequent token is
// drawn with a probability proportional to 1/(1+k)^s.
const Exponent = 1.1

// The generators, at the start of seed 1's sequences.
var (
	zipf    = newZipf(1)
	uniform = rand.New(rand.NewSource(1))
)

// Reset reseeds both generators.
func Reset(seed int64) {
	zipf = newZipf(seed)
	uniform = rand.New(rand.NewSource(seed))
}

func newZipf(seed int64) *rand.Zipf {
	return rand.NewZipf(rand.New(rand.NewSource(seed)), Exponent, 1, Vocabulary-1)
}

// Token is the demo's name of token i. Ranks are spread over the
// vocabulary (7919 is prime to 2000) so that the hot tokens are not the
// first rows the demo generated.
func Token(rank uint64) string {
	i := rank * 7919 % Vocabulary
	s := strconv.FormatUint(i, 10)
	for len(s) < 4 {
		s = "0" + s
	}
	return "t" + s
}

func path(token string) string { return "/search?q=" + token + "&limit=20" }

// Zipf is the next request of the skewed mix.
func Zipf() string { return path(Token(zipf.Uint64())) }

// Uniform is the next request of the uniform mix.
func Uniform() string { return path(Token(uint64(uniform.Int63n(Vocabulary)))) }

// Mix describes n draws of one generator (a fresh one, seeded with seed,
// so the request sequences are not disturbed).
type Mix struct {
	Kind     string  `json:"kind"`
	Draws    int     `json:"draws"`
	Distinct int     `json:"distinct"` // tokens drawn at least once
	Top10    float64 `json:"top10"`    // share of the draws going to the 10 most drawn tokens
	Top100   float64 `json:"top100"`
	Hottest  string  `json:"hottest"`
}

// Describe draws n tokens of kind "zipf" or "uniform" and summarizes them.
func Describe(kind string, n int, seed int64) (Mix, error) {
	var next func() uint64
	switch kind {
	case "zipf":
		z := newZipf(seed)
		next = func() uint64 { return z.Uint64() } // not z.Uint64: yaegi mistypes method values of library types
	case "uniform":
		r := rand.New(rand.NewSource(seed))
		next = func() uint64 { return uint64(r.Int63n(Vocabulary)) }
	default:
		return Mix{}, fmt.Errorf("kind must be \"zipf\" or \"uniform\", got %q", kind)
	}
	if n <= 0 {
		return Mix{}, fmt.Errorf("n must be > 0, got %d", n)
	}
	counts := make([]int, Vocabulary)
	for i := 0; i < n; i++ {
		counts[next()]++
	}
	return summarize(kind, counts, n), nil
}

func summarize(kind string, counts []int, n int) Mix {
	ranks := make([]int, len(counts))
	distinct := 0
	for i := range ranks {
		ranks[i] = i
		if counts[i] > 0 {
			distinct++
		}
	}
	sort.Slice(ranks, func(a, b int) bool { return counts[ranks[a]] > counts[ranks[b]] })
	share := func(k int) float64 {
		s := 0
		for _, r := range ranks[:k] {
			s += counts[r]
		}
		return float64(s) / float64(n)
	}
	return Mix{Kind: kind, Draws: n, Distinct: distinct, Top10: share(10), Top100: share(100), Hottest: Token(uint64(ranks[0]))}
}
