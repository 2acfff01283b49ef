package generic

import "slices"

func Top(xs []int) int {
	return slices.Max(xs)
}
