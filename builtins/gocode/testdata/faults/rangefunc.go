package rangefunc

func count(yield func(int) bool) {
	for i := 0; i < 3; i++ {
		if !yield(i) {
			return
		}
	}
}

func Sum() int {
	s := 0
	for i := range count {
		s += i
	}
	return s
}
