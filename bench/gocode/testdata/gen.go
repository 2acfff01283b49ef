// Package gen is the small generator the benchmarks call: the path of a
// search request for a token picked from the request number, as a
// workload generator would.
package gen

import "strconv"

const vocabulary = 2000

// Path is the request for request number i.
func Path(i int64) string {
	return "/search?q=t" + strconv.FormatInt(i*7919%vocabulary, 10) + "&limit=20"
}
