package fleet

import "fmt"

// Share is one agent's part of the load.
type Share struct {
	Clients int     // closed loop
	Rate    float64 // open loop, requests per second
	SeqBase int64
}

// Split divides clients (closed loop) or rate (open loop) across n agents:
// clients as evenly as whole numbers allow (the first agents take one more),
// rate in equal parts; each agent gets its own sequence range.
func Split(clients int, rate float64, n int) ([]Share, error) {
	if n <= 0 {
		return nil, fmt.Errorf("a fleet needs at least one agent, got %d", n)
	}
	if clients > 0 && clients < n {
		return nil, fmt.Errorf("clients = %d cannot be divided across %d agents: each needs at least one", clients, n)
	}
	out := make([]Share, n)
	for i := range out {
		out[i].SeqBase = int64(i) * SeqRange
		if clients > 0 {
			out[i].Clients = clients/n + btoi(i < clients%n)
		} else {
			out[i].Rate = rate / float64(n)
		}
	}
	return out, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
