package rangeint

func Sum(n int) int {
	s := 0
	for i := range n {
		s += i
	}
	return s
}
