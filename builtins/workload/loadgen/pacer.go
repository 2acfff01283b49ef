package loadgen

import (
	"math"
	"math/rand/v2"
	"time"
)

// pacer says when request i of an open-loop run is due, as an offset from
// the start of the run. Like vegeta's pacers, it is a pure schedule: the
// dispatcher asks it and sleeps, so lag never shifts the schedule.
type pacer interface {
	next() time.Duration
}

var (
	_ pacer = (*constantPacer)(nil)
	_ pacer = (*poissonPacer)(nil)
)

// constantPacer spaces requests exactly 1/rate apart.
type constantPacer struct {
	rate float64
	i    int64
}

func (p *constantPacer) next() time.Duration {
	d := time.Duration(float64(p.i) * float64(time.Second) / p.rate)
	p.i++
	return d
}

// poissonPacer draws exponential gaps with mean 1/rate from a seeded source,
// so a run's schedule is reproducible.
type poissonPacer struct {
	rate float64
	at   float64 // seconds
	rng  *rand.Rand
}

func (p *poissonPacer) next() time.Duration {
	d := time.Duration(p.at * float64(time.Second))
	p.at += -math.Log(1-p.rng.Float64()) / p.rate
	return d
}

// newPacer makes the schedule of a run whose request numbers start at
// seqBase: agents of one fleet (each with its own range) draw different
// Poisson gaps, so their merged arrivals stay Poisson instead of N
// arrivals at every instant; a local run (seqBase 0) draws as before.
func newPacer(arrival string, rate float64, seqBase int64) pacer {
	if arrival == "poisson" {
		return &poissonPacer{rate: rate, rng: rand.New(rand.NewPCG(1, 2+uint64(seqBase)))}
	}
	return &constantPacer{rate: rate}
}
