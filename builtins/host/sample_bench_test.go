package host

import "testing"

func BenchmarkSampleCPU(b *testing.B) {
	for b.Loop() {
		if _, err := SampleCPU(); err != nil {
			b.Fatal(err)
		}
	}
}
