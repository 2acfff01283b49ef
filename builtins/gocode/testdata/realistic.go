// Package realistic uses the standard library the way generators and
// parsers do, including a promoted method of an embedded library type.
package realistic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/url"
	"strings"
	"sync"
	"time"
)

type Counter struct {
	sync.Mutex
	n int
}

func (c *Counter) Inc() int { c.Lock(); defer c.Unlock(); c.n++; return c.n }

type Resp struct {
	Items []struct {
		ID    int64  `json:"id"`
		Title string `json:"title"`
	} `json:"items"`
}

type wrapped struct{ *strings.Builder }

var c Counter
var r = rand.New(rand.NewSource(1))

func Parse(body []byte) (int, error) {
	var resp Resp
	if err := json.Unmarshal(body, &resp); err != nil {
		return 0, err
	}
	return len(resp.Items), nil
}

func Next() string {
	q := url.Values{}
	q.Set("q", fmt.Sprint(r.Intn(100)))
	w := wrapped{&strings.Builder{}}
	w.WriteString("x")
	var b bytes.Buffer
	b.WriteString(w.String())
	_ = time.Now().Add(time.Second)
	c.Inc()
	return "/search?" + q.Encode() + b.String()
}

func Len(m map[string][]int) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}
