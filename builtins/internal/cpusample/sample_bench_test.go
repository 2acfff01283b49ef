package cpusample

import "testing"

func BenchmarkTake(b *testing.B) {
	for b.Loop() {
		if _, err := Take(); err != nil {
			b.Fatal(err)
		}
	}
}
