package panics

func Index(i int) int {
	var a []int
	return a[i]
}

func Boom(msg string) string {
	panic(msg)
}

func Divide(a, b int) int {
	return a / b
}
