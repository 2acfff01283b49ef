package loadgen

import (
	"math/rand/v2"
	"testing"
	"time"
)

// Each sequence range draws its own Poisson schedule (so a fleet's merged
// arrivals are not N copies of one), and range 0 draws the schedule local
// runs always drew.
func TestPoissonPacerSeededBySeqBase(t *testing.T) {
	a, b := newPacer("poisson", 100, 0), newPacer("poisson", 100, 1<<40)
	old := &poissonPacer{rate: 100, rng: rand.New(rand.NewPCG(1, 2))}
	same := 0
	for range 50 {
		x, y, z := a.next(), b.next(), old.next()
		if x != z {
			t.Fatalf("range 0 drew %v where local runs draw %v", x, z)
		}
		if x == y {
			same++
		}
	}
	if same > 1 { // both start at 0
		t.Fatalf("two agents' schedules share %d of 50 arrival times", same)
	}
	if c := newPacer("constant", 100, 1<<40); c.next() != 0 || c.next() != 10*time.Millisecond {
		t.Fatal("a constant schedule moved with the sequence base")
	}
}
