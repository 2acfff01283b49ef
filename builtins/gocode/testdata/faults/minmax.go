package minmax

func Clamp(x, lo, hi int) int {
	return max(lo, min(x, hi))
}
